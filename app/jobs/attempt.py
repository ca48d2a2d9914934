"""One attempt at a unit of work (repo, sha, policy sha) in `hfvet worker`: claim, vet, record.

Hub trouble that may pass (unreachable, 5xx, a garbled answer) and a store that dropped the
connection are retried by procrastinate with backoff; a repo that is not there or not ours to
read fails at once. Either way a failure is a `failed` vet row with its error: never a report,
so never an approval.
"""

from __future__ import annotations

import logging

from sqlalchemy.exc import SQLAlchemyError

from app.core.jobs import VetJob
from app.core.report import Report
from app.db.session import Store
from app.db.work import claim_work, finish_attempt, release_attempt
from app.jobs.inprocess import VetFn
from app.sources.hub_errors import HubAccessDenied, HubError, HubRepoNotFound, HubRevisionNotFound

log = logging.getLogger(__name__)
HUB_RETRIES = 4  # procrastinate retries after the first try, waiting 2, 4, 8, 16 s (RetryStrategy below)
BACKOFF_BASE = 2
MAX_ATTEMPTS = 8  # claims of one vet row, retries and take-overs of interrupted attempts together
PERMANENT = (HubRepoNotFound, HubRevisionNotFound, HubAccessDenied)


class RetryLater(Exception):  # a signal to procrastinate, not a failure
    """The attempt met trouble that may pass; procrastinate runs the job again after a backoff."""


def may_pass(exc: BaseException) -> bool:
    """Worth another try: hub errors other than "not there / not yours", and a lost store connection."""
    if isinstance(exc, PERMANENT):
        return False
    return isinstance(exc, HubError | SQLAlchemyError)


class Attempt:
    """Runs the work for one procrastinate job; ``last_try`` when procrastinate will not retry it."""

    def __init__(self, store: Store, vet: VetFn, policy_sha256: str) -> None:
        self._store = store
        self._vet = vet
        self._policy_sha256 = policy_sha256  # the policy this worker decides with

    def run(self, repo: str, sha: str, policy_sha256: str, *, last_try: bool) -> str:
        if policy_sha256 != self._policy_sha256:  # a rolling upgrade: another worker (or a later one) has it
            self._refuse(repo, sha, policy_sha256, last_try)
        with self._store.session() as session:
            job = claim_work(session, repo, sha, policy_sha256, MAX_ATTEMPTS)
        if job is None:
            return "nothing to do"  # finished already (a duplicate job), or given up
        log.info("vet %s of %s@%s: attempt %d", job.id, repo, sha, job.attempts)
        try:
            report = self._vet(job)
        except Exception as exc:  # noqa: BLE001 - every failure is recorded; only passing ones are retried
            return self._failed(job, exc, last_try)
        return self._record(job, report, last_try)

    def _record(self, job: VetJob, report: Report, last_try: bool) -> str:
        try:
            with self._store.session() as session:
                kept = finish_attempt(session, job, report=report, error=None, signer=self._store.signer)
        except SQLAlchemyError as exc:  # rolled back whole: nothing half-written
            return self._failed(job, exc, last_try, "cannot store the report: ")
        return "done" if kept else "superseded"  # superseded: another attempt took the job over

    def _failed(self, job: VetJob, exc: Exception, last_try: bool, prefix: str = "") -> str:
        error = f"{prefix}{type(exc).__name__}: {exc}"
        if may_pass(exc) and not last_try:
            log.warning("vet %s of %s@%s: %s; retrying later", job.id, job.repo, job.sha, error)
            self._release(job)
            raise RetryLater(error) from exc
        with self._store.session() as session:
            finish_attempt(session, job, report=None, error=error)
        return "failed"

    def _release(self, job: VetJob) -> None:
        try:
            with self._store.session() as session:
                release_attempt(session, job)
        except SQLAlchemyError:  # still `running`: the next attempt takes it over all the same
            log.warning("vet %s: cannot put it back in the queue now; the retry takes it over", job.id)

    def _refuse(self, repo: str, sha: str, policy_sha256: str, last_try: bool) -> None:
        error = (f"this worker's active policy is {self._policy_sha256[:12]}, the job's is {policy_sha256[:12]}: "
                 "run workers with the API's HFVET_POLICY")
        if not last_try:
            raise RetryLater(error)
        with self._store.session() as session:
            job = claim_work(session, repo, sha, policy_sha256, MAX_ATTEMPTS)
            if job is not None:
                finish_attempt(session, job, report=None, error=error)
        raise RetryLater(error)  # procrastinate records it failed too
