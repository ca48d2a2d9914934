"""A vet job as a value: what was asked, the commit it resolved to, and how far it got."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

JobStatus = Literal["queued", "running", "done", "failed"]
ACTIVE: tuple[JobStatus, ...] = ("queued", "running")


@dataclass(frozen=True)
class VetJob:
    id: str
    repo: str
    requested_revision: str
    sha: str  # the 40-hex commit the request resolved to; the job vets exactly this
    policy_name: str
    policy_sha256: str
    status: JobStatus
    requested_by: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    attempts: int
    error: str | None
    report_id: int | None

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed")
