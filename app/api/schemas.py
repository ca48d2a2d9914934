"""Public shapes of the API, apart from the database rows."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from app.core.jobs import JobStatus, VetJob


class JobOut(BaseModel):
    id: str
    repo: str
    requested_revision: str
    revision: str  # the 40-hex commit this job vets
    policy: dict[str, str]
    status: JobStatus
    requested_by: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    attempts: int
    error: str | None
    links: dict[str, str]

    @classmethod
    def of(cls, job: VetJob) -> JobOut:
        return cls(
            id=job.id, repo=job.repo, requested_revision=job.requested_revision, revision=job.sha,
            policy={"name": job.policy_name, "sha256": job.policy_sha256}, status=job.status,
            requested_by=job.requested_by, created_at=job.created_at, started_at=job.started_at,
            finished_at=job.finished_at, attempts=job.attempts, error=job.error,
            links={"self": f"/vet/{job.id}", "gate": f"/gate?repo={job.repo}&revision={job.sha}"},
        )


class VetOut(BaseModel):
    job: JobOut
    report: dict[str, Any] | None  # the §6.2 report once the job is done
