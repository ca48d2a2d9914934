"""The JobQueue seam: the API and webhooks submit vets; a runner (in-process, later procrastinate) runs them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from app.core.jobs import VetJob


class JobQueue(Protocol):
    def submit(self, repo: str, revision: str, sha: str, *, requested_by: str) -> VetJob:
        """Queue a vet of ``repo`` at ``sha``; a request for work already queued or running joins it."""
        ...

    def submit_all(self, wanted: Sequence[tuple[str, str, str]], *, requested_by: str) -> list[VetJob]:
        """Queue a vet of each (repo, revision, sha) in one transaction: all are recorded, or none."""
        ...

    def get(self, job_id: str) -> VetJob | None: ...

    def wait(self, job_id: str, timeout: float) -> VetJob | None:
        """The job once finished, or as it stands when ``timeout`` seconds have passed."""
        ...

    def start(self) -> None:
        """Begin running jobs, resuming any that were queued or running when the process stopped."""
        ...

    def stop(self) -> None: ...
