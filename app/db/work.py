"""Vet rows as the PostgreSQL workers see them: one unit of work per (repo, sha, policy sha).

Several API replicas and workers touch the same rows at once, so every step here locks what it
changes: an advisory lock per work key while requests create-or-join, and the row itself
(``FOR UPDATE``) while a worker claims or finishes it. An attempt only finishes the row it
claimed: a worker that was presumed dead and comes back cannot add a second verdict.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.core.jobs import ACTIVE, VetJob
from app.core.provenance.envelope import SigningKey
from app.core.report import Report
from app.db.attestations import attest_report
from app.db.jobs import to_job
from app.db.models import VetRow
from app.db.repository import save_report


def work_key(repo: str, sha: str, policy_sha256: str) -> str:
    """The one name of a unit of work (procrastinate's queueing lock, the advisory lock)."""
    return f"vet:{repo}@{sha}:{policy_sha256}"


def lock_work(session: Session, key: str) -> None:
    """Hold ``key`` until the transaction ends, so two replicas cannot both create a job for it."""
    session.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"), {"key": key})


def claim_work(session: Session, repo: str, sha: str, policy_sha256: str, max_attempts: int) -> VetJob | None:
    """The oldest active job for the work, now running (one more attempt); None when there is none.

    A job already `running` was interrupted (its worker died or lost the database): it is taken
    over, unless it has had ``max_attempts`` already, then it fails, since it may be what kills workers.
    """
    query = (select(VetRow).where(VetRow.repo_id == repo, VetRow.sha == sha, VetRow.policy_sha256 == policy_sha256,
                                  VetRow.status.in_(ACTIVE))
             .order_by(VetRow.created_at).limit(1).with_for_update())
    row = session.execute(query).scalars().first()
    if row is None:
        return None
    if row.attempts >= max_attempts:
        _close(row, f"tried {row.attempts} times without a result (last attempt interrupted or failed)")
        return None
    row.status, row.started_at, row.attempts = "running", datetime.now(UTC), row.attempts + 1
    session.flush()
    return to_job(row)


def finish_attempt(session: Session, job: VetJob, *, report: Report | None, error: str | None,
                   signer: SigningKey | None = None) -> bool:
    """Record the outcome of the attempt ``job`` was claimed as (report, its attestation when ``signer``
    is given, and state in one transaction).

    False, with nothing written, when that attempt no longer owns the row (another one took it over).
    """
    row = _owned(session, job)
    if row is None:
        return False
    report_id = None
    if report is not None:
        report_id = save_report(session, report, requested_revision=job.requested_revision, actor=job.requested_by)
        attest_report(session, report_id, signer)
    _close(row, error, report_id)
    return True


def release_attempt(session: Session, job: VetJob) -> bool:
    """Put the job back in the queue for a retry, if this attempt still owns it."""
    row = _owned(session, job)
    if row is not None:
        row.status = "queued"
    return row is not None


def orphaned_work(session: Session, older_than: datetime) -> list[tuple[str, str, str]]:
    """(repo, sha, policy sha) of active vet rows, untouched since ``older_than``, that no procrastinate
    job waits for or runs: the API died between commit and defer, or a job ended without its row.

    One statement, so one snapshot: a worker commits the row before procrastinate closes the job,
    and a retry requeues the row while the job is still `doing`, so live work never looks orphaned.
    """
    query = text(
        "SELECT DISTINCT v.repo_id, v.sha, v.policy_sha256 FROM vets v "
        "WHERE v.status IN ('queued', 'running') AND coalesce(v.started_at, v.created_at) < :older_than "
        "AND NOT EXISTS (SELECT 1 FROM procrastinate.procrastinate_jobs j WHERE j.status IN ('todo', 'doing') "
        "AND j.lock = 'vet:' || v.repo_id || '@' || v.sha || ':' || v.policy_sha256)"  # work_key(), in SQL
    )
    return [(repo, sha, digest) for repo, sha, digest in session.execute(query, {"older_than": older_than})]


def _owned(session: Session, job: VetJob) -> VetRow | None:
    row = session.get(VetRow, job.id, with_for_update=True)
    if row is None or row.status != "running" or row.attempts != job.attempts:
        return None
    return row


def _close(row: VetRow, error: str | None, report_id: int | None = None) -> None:
    row.status = "failed" if error else "done"
    row.finished_at, row.error, row.report_pk = datetime.now(UTC), error, report_id
