"""The embedded job runner: vet jobs persisted in the store, run on a bounded thread pool in this process
(each thread hands its vet to a child process, app.jobs.processes, unless HFVET_JOB_ISOLATION=thread).

Nothing is lost on restart: a job is a row before it is a thread, and ``start()`` requeues what a
stopped process left queued or running. Concurrent requests for the same (repo, sha, policy sha)
join one job.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy.exc import SQLAlchemyError

from app.core.jobs import VetJob
from app.core.report import Report
from app.db import jobs as rows
from app.db.attestations import attest_report
from app.db.repository import save_report
from app.db.session import Store
from app.errors import HfvetError

VetFn = Callable[[VetJob], Report]  # vets job.repo at exactly job.sha under the job's policy
MAX_ATTEMPTS = 3
FINISH_RETRY_PAUSES = (0.2, 0.5, 1.0, 2.0, 4.0, 8.0)  # ~16 s: a lock or a reconnect, not an outage


class QueueError(HfvetError):
    """Vet requests could not be recorded; none of them was (the API answers 503)."""


class InProcessQueue:
    def __init__(self, store: Store, vet: VetFn, policy: tuple[str, str], *, workers: int = 2) -> None:
        self._store = store
        self._vet = vet
        self._policy = policy  # (name, sha256) of the active policy
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._submit_lock = threading.Lock()  # find-or-create is atomic within the process
        self._finished = threading.Condition()

    def start(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="hfvet-vet")
        with self._store.session() as session:
            pending = rows.requeue_interrupted(session, MAX_ATTEMPTS)
        for job_id in pending:
            self._pool.submit(self._run, job_id)

    def stop(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)  # cancelled jobs stay queued for next start
            self._pool = None

    def submit(self, repo: str, revision: str, sha: str, *, requested_by: str) -> VetJob:
        return self.submit_all([(repo, revision, sha)], requested_by=requested_by)[0]

    def submit_all(self, wanted: Sequence[tuple[str, str, str]], *, requested_by: str) -> list[VetJob]:
        """One transaction for every (repo, revision, sha): all are recorded, or none (QueueError)."""
        try:
            with self._submit_lock, self._store.session() as session:
                made = [rows.create_or_join(session, repo, revision, sha, self._policy, requested_by)
                        for repo, revision, sha in wanted]
        except SQLAlchemyError as exc:
            raise QueueError(f"the store refused the vet requests ({type(exc).__name__}); "
                             "nothing was queued, send them again") from exc
        if self._pool is not None:  # only once committed: a rolled-back job never runs
            for job, created in made:
                if created:
                    self._pool.submit(self._run, job.id)
        return [job for job, _ in made]

    def get(self, job_id: str) -> VetJob | None:
        with self._store.session() as session:
            return rows.get(session, job_id)

    def wait(self, job_id: str, timeout: float) -> VetJob | None:
        deadline = time.monotonic() + max(0.0, timeout)
        job = self.get(job_id)
        while job is not None and not job.finished and time.monotonic() < deadline:
            with self._finished:
                self._finished.wait(min(0.5, max(0.0, deadline - time.monotonic())))
            job = self.get(job_id)
        return job

    def _run(self, job_id: str) -> None:
        with self._store.session() as session:
            job = rows.claim(session, job_id)
        if job is None:
            return  # finished already, or another runner has it
        try:
            report = self._vet(job)
        except Exception as exc:  # noqa: BLE001 - a failed vet is a recorded outcome, never an approval
            self._finish(job_id, None, f"{type(exc).__name__}: {exc}")
            return
        try:
            with self._store.session() as session:  # report and job state in one transaction
                report_id = save_report(session, report, requested_revision=job.requested_revision,
                                        actor=job.requested_by)
                attest_report(session, report_id, self._store.signer)
                rows.finish(session, job_id, report_id=report_id, error=None)
        except Exception as exc:  # noqa: BLE001 - rolled back whole: the job fails visibly, never stays running
            self._finish(job_id, None, f"cannot store the report: {type(exc).__name__}: {exc}")
            return
        self._notify()

    def _finish(self, job_id: str, report_id: int | None, error: str | None) -> None:
        """Record the outcome, retrying while the store is briefly unavailable (locked, reconnecting).

        The store that just refused the report may refuse this too; given up on, the job stays
        `running` and the next start requeues it: never lost, never approved."""
        for pause in (*FINISH_RETRY_PAUSES, None):
            try:
                with self._store.session() as session:
                    rows.finish(session, job_id, report_id=report_id, error=error)
                break
            except SQLAlchemyError:
                if pause is None:
                    raise
                time.sleep(pause)
        self._notify()

    def _notify(self) -> None:
        with self._finished:
            self._finished.notify_all()
