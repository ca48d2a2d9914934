"""The tasks `hfvet worker` runs: a vet per unit of work, and the periodic re-vet pass."""

from __future__ import annotations

import procrastinate
from procrastinate import JobContext, RetryStrategy

from app.core.policy import LoadedPolicy
from app.db.session import Store
from app.jobs.attempt import BACKOFF_BASE, HUB_RETRIES, Attempt, RetryLater
from app.jobs.connection import REVET_QUEUE, REVET_TASK, VET_QUEUE, VET_TASK
from app.jobs.inprocess import VetFn
from app.jobs.pgqueue import ProcrastinateQueue
from app.services.outcomes import Resolver
from app.services.revetting import revet_once

RETRY = RetryStrategy(max_attempts=HUB_RETRIES, exponential_wait=BACKOFF_BASE, retry_exceptions={RetryLater})


def register(app: procrastinate.App, *, store: Store, vet: VetFn, policy: LoadedPolicy, resolve: Resolver,
             scanners: dict[str, str], revet_cron: str) -> None:
    attempt = Attempt(store, vet, policy.sha256)

    @app.task(name=VET_TASK, queue=VET_QUEUE, pass_context=True, retry=RETRY)
    def vet_work(context: JobContext, repo: str, sha: str, policy_sha256: str) -> str:
        last_try = context.job.attempts >= HUB_RETRIES  # procrastinate's RetryStrategy gives up after this one
        return attempt.run(repo, sha, policy_sha256, last_try=last_try)

    @app.periodic(cron=revet_cron, periodic_id="revet")
    @app.task(name=REVET_TASK, queue=REVET_QUEUE, queueing_lock=REVET_TASK)
    def revet(timestamp: int) -> str:
        queue = ProcrastinateQueue(store, (policy.name, policy.sha256))
        queue.start()
        try:
            result = revet_once(store=store, jobs=queue, policy=policy, resolve=resolve, scanners=scanners)
        finally:
            queue.stop()
        return f"{len(result.heads.queued)} moved heads, {len(result.revetted)} re-vets queued"
