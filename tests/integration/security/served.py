"""An in-process app over a store holding real example reports, a live job and a token per role.

The hub is never asked: the resolver records what it is asked and answers from the stored reports,
and a vet job that starts fails at once (its hub endpoint is a closed loopback port in any case).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.db import jobs, tokens
from app.db.repository import save_report
from app.server import create_app
from app.services.store import open_store
from app.settings import Settings
from tests.integration.vetted import Vetted

ROLES = ("reader", "vetter", "reviewer", "admin")
WEBHOOK_SECRET = "wh-sEcReT-never-shown"
HUB_TOKEN = "hf_sEcReT-never-shown"
CLOSED_PORT = "http://127.0.0.1:9"  # discard port: nothing listens, a connection is refused at once


@dataclass
class Served:
    client: TestClient
    app: FastAPI
    settings: Settings
    secrets: dict[str, str]  # role -> bearer secret
    job_id: str
    asked: list[tuple[str, str]] = field(default_factory=list)  # what the resolver was asked

    def headers(self, role: str | None) -> dict[str, str]:
        return {} if role is None else {"Authorization": f"Bearer {self.secrets[role]}"}


def settings_for(tmp: Path, **changes: object) -> Settings:
    values: dict[str, object] = {
        "database_url": f"sqlite:///{tmp / 'store.db'}",
        "policy": Path("default"),
        "HF_ENDPOINT": CLOSED_PORT,
        "HF_TOKEN": HUB_TOKEN,
        "webhook_secret": WEBHOOK_SECRET,
        "rate_limit_burst": 0,
        "job_isolation": "thread",  # the offline vet below is a patch in this process
    }
    return Settings(**(values | changes))  # type: ignore[arg-type]


def fill_store(settings: Settings, vetted: Vetted, *, job: bool = True) -> tuple[dict[str, str], str]:
    """The example reports, one token per role and (unless not ``job``) one queued job; returns (secrets, job id)."""
    store = open_store(settings)
    with store.session() as session:
        for report in (vetted.review, vetted.reject, vetted.approve):
            save_report(session, report, requested_revision="main", actor="test")
        made = {role: tokens.create(session, f"{role}-1", role, actor="test") for role in ROLES}
        queued = (
            jobs.create_or_join(session, vetted.approve.repo or "", "main", "b" * 40, ("old", "0" * 64), "test")[0].id
            if job
            else ""
        )
    store.close()
    return made, queued


@contextmanager
def served(tmp: Path, vetted: Vetted, **changes: object) -> Iterator[Served]:
    settings = settings_for(tmp, **changes)
    secrets, job_id = fill_store(settings, vetted)
    shas = {r.repo: r.revision for r in (vetted.review, vetted.reject, vetted.approve)}
    asked: list[tuple[str, str]] = []

    def resolve(repo: str, revision: str) -> str:
        asked.append((repo, revision))
        return shas.get(repo) or "c" * 40

    app = create_app(settings, resolve=resolve)
    offline = mock.patch("app.services.vetting.vet_remote", side_effect=ConnectionRefusedError("offline test"))
    with offline, TestClient(app) as client:
        yield Served(client, app, settings, secrets, job_id, asked)


def every_secret(s: Served) -> dict[str, str]:
    return {f"token:{role}": secret for role, secret in s.secrets.items()} | {
        "webhook": WEBHOOK_SECRET,
        "hub": HUB_TOKEN,
    }


@pytest.fixture
def all_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog
