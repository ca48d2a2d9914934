"""The webhook fallback: re-check the branch heads of approved repos and queue a vet of any that moved.

Hub webhooks are per user and rate limited, so a missed one must not leave a deploy pinned to a
stale answer forever. Polling only ever queues vets; it never writes a verdict, so an unreachable
hub or a failed check ends in "nothing queued" (logged), never in an approval.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.policy import LoadedPolicy
from app.core.ports import SourceError
from app.db.repository import reports_for
from app.db.session import Store
from app.db.watch import watched_refs
from app.errors import HfvetError
from app.services.gating import gate
from app.services.outcomes import Resolver

if TYPE_CHECKING:
    from app.core.jobs import VetJob
    from app.jobs.interface import JobQueue

log = logging.getLogger(__name__)
REQUESTED_BY = "poller"


@dataclass
class PollResult:
    checked: int = 0  # (repo, branch) pairs resolved on the hub
    queued: list[VetJob] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # "repo@branch: why", for each head not resolved


def poll_once(*, store: Store, jobs: JobQueue, policy: LoadedPolicy, resolve: Resolver) -> PollResult:
    """One pass over every approved repo's watched branches (``main`` and the branches vetted by name)."""
    result = PollResult()
    with store.session() as session:
        refs = watched_refs(session)
    for repo, branches in sorted(refs.items()):
        if not _approved(repo, store, policy, resolve):
            continue  # nothing deployable to keep current
        with store.session() as session:
            vetted = {r.sha for r in reports_for(session, repo)}
        for branch in sorted(branches):
            _check(repo, branch, vetted, jobs, resolve, result)
    log.info("poll: %d heads checked, %d vets queued, %d not resolved",
             result.checked, len(result.queued), len(result.failed))
    return result


def _approved(repo: str, store: Store, policy: LoadedPolicy, resolve: Resolver) -> bool:
    """Has the repo an approved commit under the active policy? (The gate's own rule: the hub is asked
    only for a referenced repo's branch, when the verdict depends on it.)"""
    return gate(repo, None, store=store, policy=policy, resolve=resolve).approved


def _check(repo: str, branch: str, vetted: set[str], jobs: JobQueue, resolve: Resolver, result: PollResult) -> None:
    try:
        head = resolve(repo, branch)
    except (HfvetError, SourceError) as exc:
        result.failed.append(f"{repo}@{branch}: {exc}")
        log.warning("poll: cannot resolve %s@%s, nothing queued: %s", repo, branch, exc)
        return
    result.checked += 1
    if head in vetted:
        return
    job = jobs.submit(repo, branch, head, requested_by=REQUESTED_BY)
    result.queued.append(job)
    log.info("poll: %s@%s moved to %s; vet job %s", repo, branch, head, job.id)
