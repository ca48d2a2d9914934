"""The JobQueue of API replicas on PostgreSQL: vet rows in the store, the work deferred to procrastinate.

A request creates (or joins) the vet row under an advisory lock on its work key, commits, then
defers one procrastinate job per work key (the key is also the job's queueing lock, so a second
replica deferring the same work gets ``AlreadyEnqueued`` and simply attaches). The `hfvet worker`
that runs it picks the oldest active row for the key. If the process dies between commit and
defer, the workers' sweep defers the forgotten row again (app.jobs.sweep).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Sequence

import procrastinate
from procrastinate.exceptions import AlreadyEnqueued
from procrastinate.jobs import JobDeferrer
from sqlalchemy.exc import SQLAlchemyError

from app.core.jobs import VetJob
from app.db import jobs as rows
from app.db.session import Store
from app.db.work import lock_work, work_key
from app.jobs.connection import VET_QUEUE, VET_TASK, deferring_app
from app.jobs.inprocess import QueueError

log = logging.getLogger(__name__)
WAIT_POLL = 0.2  # seconds between looks at a row someone else is finishing


def defer_work(app: procrastinate.App, repo: str, sha: str, policy_sha256: str) -> None:
    """Queue the work once: a job already waiting for the same key is the one that will do it."""
    with contextlib.suppress(AlreadyEnqueued):
        _deferrer(app, repo, sha, policy_sha256).defer(repo=repo, sha=sha, policy_sha256=policy_sha256)


async def defer_work_async(app: procrastinate.App, repo: str, sha: str, policy_sha256: str) -> None:
    """defer_work() for the workers' event loop."""
    with contextlib.suppress(AlreadyEnqueued):
        await _deferrer(app, repo, sha, policy_sha256).defer_async(repo=repo, sha=sha, policy_sha256=policy_sha256)


def _deferrer(app: procrastinate.App, repo: str, sha: str, policy_sha256: str) -> JobDeferrer:
    key = work_key(repo, sha, policy_sha256)  # the lock too: one attempt at the work runs at a time
    return app.configure_task(VET_TASK, queue=VET_QUEUE, lock=key, queueing_lock=key)


class ProcrastinateQueue:
    def __init__(self, store: Store, policy: tuple[str, str]) -> None:
        self._store = store
        self._policy = policy  # (name, sha256) of the active policy
        self._app = deferring_app(store.url)

    def start(self) -> None:
        self._app.open()

    def stop(self) -> None:
        self._app.close()

    def submit(self, repo: str, revision: str, sha: str, *, requested_by: str) -> VetJob:
        return self.submit_all([(repo, revision, sha)], requested_by=requested_by)[0]

    def submit_all(self, wanted: Sequence[tuple[str, str, str]], *, requested_by: str) -> list[VetJob]:
        """One transaction for every (repo, revision, sha): all are recorded, or none (QueueError)."""
        digest = self._policy[1]
        try:
            with self._store.session() as session:
                for key in sorted({work_key(repo, sha, digest) for repo, _, sha in wanted}):  # one order: no deadlock
                    lock_work(session, key)
                made = [rows.create_or_join(session, repo, revision, sha, self._policy, requested_by)
                        for repo, revision, sha in wanted]
        except SQLAlchemyError as exc:
            raise QueueError(f"the store refused the vet requests ({type(exc).__name__}); "
                             "nothing was queued, send them again") from exc
        self._defer([job for job, created in made if created])
        return [job for job, _ in made]

    def _defer(self, created: list[VetJob]) -> None:
        for job in created:
            try:
                defer_work(self._app, job.repo, job.sha, job.policy_sha256)
            except Exception as exc:  # noqa: BLE001 - the row is committed and queued: the sweep defers it again
                log.warning("vet job %s recorded but not deferred (%s: %s); the workers' sweep will defer it",
                            job.id, type(exc).__name__, exc)

    def get(self, job_id: str) -> VetJob | None:
        with self._store.session() as session:
            return rows.get(session, job_id)

    def wait(self, job_id: str, timeout: float) -> VetJob | None:
        deadline = time.monotonic() + max(0.0, timeout)
        job = self.get(job_id)
        while job is not None and not job.finished and time.monotonic() < deadline:
            time.sleep(min(WAIT_POLL, max(0.0, deadline - time.monotonic())))
            job = self.get(job_id)
        return job
