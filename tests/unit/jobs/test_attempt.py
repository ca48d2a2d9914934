"""One worker attempt at a unit of work: what is retried, what fails at once, and that an attempt
which lost its job cannot add a verdict. (SQLite store: the row logic is the same on PostgreSQL.)"""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from app.core.findings import Severity
from app.core.jobs import VetJob
from app.core.pipeline import vet
from app.core.report import Report
from app.db import jobs as rows
from app.db.models import ReportRow
from app.db.session import Store
from app.db.work import claim_work, finish_attempt
from app.jobs.attempt import MAX_ATTEMPTS, Attempt, RetryLater, may_pass
from app.sources.hub_errors import HubAccessDenied, HubError, HubRepoNotFound, HubRevisionNotFound, HubUnreachable
from tests.fakes import MemorySource, TextScanner

REPO = "acme/model"
SHA = "0123456789abcdef0123456789abcdef01234567"
POLICY = ("default", "a" * 64)


def queued(store: Store) -> VetJob:
    with store.session() as session:
        job, created = rows.create_or_join(session, REPO, "main", SHA, POLICY, "token:ci")
    assert created
    return job


def report(_job: VetJob) -> Report:
    return vet(MemorySource({"README.md": b"fine", "config.json": b"{}"}, repo_id=REPO, revision=SHA),
               [TextScanner(Severity.HIGH)])


def state(store: Store, job: VetJob) -> VetJob:
    with store.session() as session:
        found = rows.get(session, job.id)
    assert found is not None
    return found


def reports(store: Store) -> int:
    with store.session() as session:
        return int(session.execute(select(func.count()).select_from(ReportRow)).scalar_one())


def failing(exc: Exception):  # type: ignore[no-untyped-def]
    def vet_fn(_job: VetJob) -> Report:
        raise exc
    return vet_fn


@pytest.mark.parametrize("exc", [HubUnreachable("timeout"), HubError("HTTP 503"), OperationalError("x", {}, None)])
def test_trouble_that_may_pass_is_retried_and_the_job_waits_queued(store: Store, exc: Exception) -> None:
    job = queued(store)
    with pytest.raises(RetryLater):
        Attempt(store, failing(exc), POLICY[1]).run(REPO, SHA, POLICY[1], last_try=False)
    after = state(store, job)
    assert (after.status, after.attempts, after.error) == ("queued", 1, None)


@pytest.mark.parametrize("exc", [HubRepoNotFound("gone"), HubRevisionNotFound("no such sha"),
                                 HubAccessDenied("gated"), ValueError("scanner bug")])
def test_permanent_failures_fail_at_once_with_their_error(store: Store, exc: Exception) -> None:
    job = queued(store)
    assert Attempt(store, failing(exc), POLICY[1]).run(REPO, SHA, POLICY[1], last_try=False) == "failed"
    after = state(store, job)
    assert after.status == "failed" and str(exc) in (after.error or "") and after.report_id is None
    assert reports(store) == 0  # a failure is never a verdict


def test_the_last_try_of_passing_trouble_fails_visibly(store: Store) -> None:
    job = queued(store)
    assert Attempt(store, failing(HubUnreachable("still down")), POLICY[1]).run(
        REPO, SHA, POLICY[1], last_try=True) == "failed"
    assert "still down" in (state(store, job).error or "")


def test_a_vet_is_recorded_once_with_its_report(store: Store) -> None:
    job = queued(store)
    assert Attempt(store, report, POLICY[1]).run(REPO, SHA, POLICY[1], last_try=False) == "done"
    after = state(store, job)
    assert after.status == "done" and after.report_id is not None and after.attempts == 1
    assert Attempt(store, report, POLICY[1]).run(REPO, SHA, POLICY[1], last_try=False) == "nothing to do"
    assert reports(store) == 1


def test_an_attempt_that_was_taken_over_adds_no_verdict(store: Store) -> None:
    queued(store)
    with store.session() as session:
        first = claim_work(session, REPO, SHA, POLICY[1], MAX_ATTEMPTS)
    with store.session() as session:
        second = claim_work(session, REPO, SHA, POLICY[1], MAX_ATTEMPTS)  # the first worker was presumed dead
    assert first is not None and second is not None and second.attempts == 2
    with store.session() as session:
        assert not finish_attempt(session, first, report=report(first), error=None)  # it woke up: refused
    with store.session() as session:
        assert finish_attempt(session, second, report=report(second), error=None)
    assert reports(store) == 1


def test_a_job_interrupted_too_often_fails_instead_of_killing_more_workers(store: Store) -> None:
    job = queued(store)
    for _ in range(MAX_ATTEMPTS):
        with store.session() as session:
            assert claim_work(session, REPO, SHA, POLICY[1], MAX_ATTEMPTS) is not None
    with store.session() as session:
        assert claim_work(session, REPO, SHA, POLICY[1], MAX_ATTEMPTS) is None
    after = state(store, job)
    assert after.status == "failed" and f"tried {MAX_ATTEMPTS} times" in (after.error or "")


def test_a_worker_on_another_policy_leaves_the_job_for_a_retry(store: Store) -> None:
    job = queued(store)
    with pytest.raises(RetryLater, match="active policy"):
        Attempt(store, report, "b" * 64).run(REPO, SHA, POLICY[1], last_try=False)
    assert state(store, job).status == "queued"
    with pytest.raises(RetryLater):
        Attempt(store, report, "b" * 64).run(REPO, SHA, POLICY[1], last_try=True)
    assert state(store, job).status == "failed" and reports(store) == 0


def test_only_hub_and_connection_trouble_may_pass() -> None:
    assert may_pass(HubUnreachable("x")) and may_pass(HubError("x"))
    assert not may_pass(HubRepoNotFound("x")) and not may_pass(HubAccessDenied("x")) and not may_pass(KeyError("x"))


def test_a_worker_signs_the_report_it_stores_with_the_store_s_key(store: Store) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from app.core.provenance.envelope import SigningKey, load_public
    from app.core.provenance.verify import Expect, verify
    from app.db.attestations import newest

    def with_blob_ids(job: VetJob) -> Report:  # as a hub lists them: every file has a digest to attest
        made = report(job)
        return replace(made, files=tuple(replace(f, blob_id=f"{i:040x}") for i, f in enumerate(made.files)))

    store.signer = SigningKey(Ed25519PrivateKey.generate())
    queued(store)
    assert Attempt(store, with_blob_ids, POLICY[1]).run(REPO, SHA, POLICY[1], last_try=False) == "done"
    with store.session() as session:
        signed = newest(session, REPO, SHA)
    assert signed is not None and signed.key_id == store.signer.key_id
    found = verify(signed.envelope, load_public(store.signer.public_pem()), Expect(repo=REPO, revision=SHA))
    assert found.verdict == reports_verdict(store)


def reports_verdict(store: Store) -> str:
    with store.session() as session:
        return str(session.execute(select(ReportRow.verdict)).scalar_one())
