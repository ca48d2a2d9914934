"""Rows of vet jobs: create or join, claim, finish. Every change is one transaction."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.core.jobs import ACTIVE, VetJob
from app.db.models import AuditRow, VetRow


def create_or_join(
    session: Session, repo: str, revision: str, sha: str, policy: tuple[str, str], requested_by: str
) -> tuple[VetJob, bool]:
    """The active job for (repo, sha, policy sha), or a new queued one; True when it is new."""
    name, digest = policy
    query = select(VetRow).where(VetRow.repo_id == repo, VetRow.sha == sha, VetRow.policy_sha256 == digest,
                                 VetRow.status.in_(ACTIVE))
    existing = session.execute(query.order_by(VetRow.created_at)).scalars().first()
    if existing is not None:
        return to_job(existing), False
    row = VetRow(id=uuid.uuid4().hex, repo_id=repo, requested_revision=revision, sha=sha, policy_name=name,
                 policy_sha256=digest, status="queued", requested_by=requested_by, attempts=0,
                 created_at=datetime.now(UTC))
    session.add(row)
    session.add(AuditRow(actor=requested_by, action="vet-requested", subject=f"{repo}@{sha}",
                         detail=f"revision {revision}, job {row.id}"))
    session.flush()
    return to_job(row), True


def get(session: Session, job_id: str) -> VetJob | None:
    row = session.get(VetRow, job_id)
    return None if row is None else to_job(row)


def claim(session: Session, job_id: str) -> VetJob | None:
    """Mark a queued job running (one more attempt); None if someone else has it or it is finished."""
    result = session.execute(
        update(VetRow).where(VetRow.id == job_id, VetRow.status == "queued")
        .values(status="running", started_at=datetime.now(UTC), attempts=VetRow.attempts + 1)
    )
    return get(session, job_id) if result.rowcount == 1 else None  # type: ignore[attr-defined]


def finish(session: Session, job_id: str, *, report_id: int | None, error: str | None) -> None:
    session.execute(
        update(VetRow).where(VetRow.id == job_id)
        .values(status="failed" if error else "done", finished_at=datetime.now(UTC), report_pk=report_id,
                error=error)
    )


def requeue_interrupted(session: Session, max_attempts: int) -> list[str]:
    """Jobs a stopped process left queued or running, back in the queue, oldest first.

    A job that was interrupted ``max_attempts`` times fails instead: it may be what kills the process.
    """
    running = (VetRow.status == "running")
    session.execute(update(VetRow).where(running, VetRow.attempts >= max_attempts).values(
        status="failed", finished_at=datetime.now(UTC),
        error=f"interrupted {max_attempts} times (the process stopped while vetting it)"))
    session.execute(update(VetRow).where(running).values(status="queued"))
    query = select(VetRow.id).where(VetRow.status == "queued").order_by(VetRow.created_at)
    return list(session.execute(query).scalars())


def to_job(row: VetRow) -> VetJob:
    return VetJob(row.id, row.repo_id, row.requested_revision, row.sha, row.policy_name, row.policy_sha256,
                  row.status, row.requested_by, row.created_at, row.started_at,  # type: ignore[arg-type]
                  row.finished_at, row.attempts, row.error, row.report_pk)
