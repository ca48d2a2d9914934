"""The webhook receiver's store on SQLite and PostgreSQL: remembered deliveries, and heads vetted already."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from app.core.jobs import VetJob
from app.db.session import Store
from app.services import webhooks
from app.services.webhooks import Delivery, receive
from tests.integration.api.stored import policy, report, save

DEFAULT = policy("default")
REPO, SHA = "nvidia/model", "a" * 40


class Recorder:
    """A JobQueue that records what it was asked to queue."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, str]] = []

    def submit_all(self, wanted: list[tuple[str, str, str]], *, requested_by: str) -> list[VetJob]:
        self.asked += wanted
        return []


def delivery(webhook: str = "w1", sha: str = SHA, old: str | None = None) -> Delivery:
    return Delivery(webhook, REPO, "refs/heads/main", "main", old, sha)


def reasons(store: Store, jobs: Recorder, *wanted: Delivery) -> list[str]:
    received = receive(store, jobs, DEFAULT.sha256, wanted, requested_by="webhook")  # type: ignore[arg-type]
    return [why["reason"] for why in received.ignored]


def test_a_delivery_is_acted_on_once_and_a_twin_in_one_payload_too(store: Store) -> None:
    jobs = Recorder()
    assert reasons(store, jobs, delivery(), delivery()) == []  # twins in one payload: remembered once
    assert reasons(store, jobs, delivery()) == ["replayed delivery"]
    assert reasons(store, jobs, delivery(old="b" * 40)) == []  # a new push: not a replay
    assert jobs.asked == [(REPO, "main", SHA)] * 3


def test_a_head_vetted_from_the_hub_under_the_active_policy_is_not_vetted_again(store: Store) -> None:
    jobs = Recorder()
    local = dataclasses.replace(report(REPO, SHA, under=DEFAULT), identity={})  # a local scan: no hub endpoint
    save(store, local)
    save(store, report(REPO, "c" * 40, under=policy("strict")))  # another policy: vetted again under this one
    assert reasons(store, jobs, delivery(), delivery("w1", "c" * 40)) == []
    report_id = save(store, report(REPO, SHA, under=DEFAULT))
    vetted = f"{SHA} already vetted under the active policy (report {report_id})"
    assert reasons(store, jobs, delivery("w2")) == [vetted]
    assert jobs.asked == [(REPO, "main", SHA), (REPO, "main", "c" * 40)]


def test_remembered_deliveries_are_pruned(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    jobs = Recorder()
    reasons(store, jobs, delivery("old"))
    assert reasons(store, jobs, delivery("old")) == ["replayed delivery"]
    monkeypatch.setattr(webhooks, "RETENTION", timedelta(seconds=-1))  # every row is past it: no sleep needed
    reasons(store, jobs, delivery("new"))  # acting on a delivery prunes the table
    assert reasons(store, jobs, delivery("old")) == []  # forgotten: a replay this late is vetted (or found vetted)
