"""The workers' periodic pass: keep every approval resting on the commit, policy and scanners in force.

1. Branch heads of approved repos (app.services.polling): a moved head queues a vet of the new commit.
2. Approved revisions whose newest report was decided under another policy (sha256) or by other
   scanner versions are vetted again under the active policy. The new report is stored beside the
   old one, so both verdicts stay on record; the gate answers from the newest.

Like polling, this only ever queues vets: it writes no verdict itself.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.policy import LoadedPolicy
from app.db.repository import StoredReport, newest_reports
from app.db.session import Store
from app.services.outcomes import Resolver, is_local_scan, policy_outcome
from app.services.polling import PollResult, poll_once

if TYPE_CHECKING:
    from app.core.jobs import VetJob
    from app.jobs.interface import JobQueue

log = logging.getLogger(__name__)
REQUESTED_BY = "revet"


@dataclass
class RevetResult:
    heads: PollResult
    revetted: list[VetJob] = field(default_factory=list)  # approvals from an old policy or scanner set


def revet_once(*, store: Store, jobs: JobQueue, policy: LoadedPolicy, resolve: Resolver,
               scanners: dict[str, str]) -> RevetResult:
    """One pass; ``scanners`` are the running scanners' versions (name -> version)."""
    result = RevetResult(poll_once(store=store, jobs=jobs, policy=policy, resolve=resolve))
    stale = stale_approvals(store, policy, scanners)
    if stale:
        result.revetted = jobs.submit_all([(repo, sha, sha) for repo, sha in stale], requested_by=REQUESTED_BY)
    log.info("revet: %d approved revisions decided under another policy or scanners, queued again", len(stale))
    return result


def stale_approvals(store: Store, policy: LoadedPolicy, scanners: dict[str, str]) -> list[tuple[str, str]]:
    """(repo, sha) of approved revisions whose newest report is not from ``policy`` and ``scanners``."""
    with store.session() as session:
        newest = newest_reports(session)
    return [(r.repo_id, r.sha) for r in newest if _approved(r, policy) and _stale(r, policy, scanners)]


def _approved(report: StoredReport, policy: LoadedPolicy) -> bool:
    if is_local_scan(report):
        return False  # a local scan never approves a hub commit, and the hub cannot re-vet its bytes
    return report.verdict == "approve" or policy_outcome(report, policy).approved


def _stale(report: StoredReport, policy: LoadedPolicy, scanners: dict[str, str]) -> bool:
    return report.policy_sha256 != policy.sha256 or report.scanners != scanners
