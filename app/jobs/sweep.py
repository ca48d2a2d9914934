"""What every `hfvet worker` does besides running jobs, every few heartbeats: rescue lost work.

- Jobs of a worker that stopped sending heartbeats (killed, frozen, cut off from PostgreSQL) go
  back to `todo`: another worker takes them over, and the vet row's attempt check keeps the
  dead worker from adding a verdict should it wake up.
- Vet rows that are active but have no procrastinate job (the API died between its commit and
  its defer) are deferred again.

Every worker sweeps; doing it twice is harmless (a retry of a job no longer `doing` is refused,
a second defer of waiting work is ``AlreadyEnqueued``).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import procrastinate
from procrastinate.exceptions import ProcrastinateException

from app.db.session import Store
from app.db.work import orphaned_work
from app.jobs.pgqueue import defer_work_async

log = logging.getLogger(__name__)
STALE_HEARTBEATS = 3  # a worker silent for this many heartbeats is presumed dead


async def sweep_forever(app: procrastinate.App, store: Store, heartbeat: float) -> None:
    while True:
        await asyncio.sleep(heartbeat)
        try:
            await sweep_once(app, store, heartbeat)
        except Exception as exc:  # noqa: BLE001 - the database may be away for a moment; the next sweep tries again
            log.warning("sweep failed (%s: %s); next in %ss", type(exc).__name__, exc, heartbeat)


async def sweep_once(app: procrastinate.App, store: Store, heartbeat: float) -> tuple[int, int]:
    """(stalled jobs retried, orphaned vets deferred again)."""
    silent = heartbeat * STALE_HEARTBEATS
    retried = 0
    for job in await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=silent):
        try:
            await app.job_manager.retry_job(job)
            retried += 1
            log.warning("job %s (%s) was on a silent worker: queued again", job.id, job.lock)
        except ProcrastinateException:
            pass  # another worker's sweep was first
    orphans = await asyncio.to_thread(_orphans, store, silent)
    for repo, sha, digest in orphans:
        await defer_work_async(app, repo, sha, digest)
        log.warning("vet of %s@%s had no queued job: deferred again", repo, sha)
    return retried, len(orphans)


def _orphans(store: Store, grace: float) -> list[tuple[str, str, str]]:
    with store.session() as session:
        return orphaned_work(session, datetime.now(UTC) - timedelta(seconds=grace))
