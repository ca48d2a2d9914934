"""The review queue and the decisions' audit trail, as the dashboard shows them.

A commit waits for a human when its newest report's verdict under the active policy is `review`
and no review settled it (an approval that still covers it, or any reject). Local scans never
queue: only a vet from the hub can be approved.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.gate import Outcome
from app.core.policy import LoadedPolicy
from app.core.policy.identity import tier_of
from app.core.review import Review
from app.db import activity, audit
from app.db.audit import AuditEntry
from app.db.pulls import PULL
from app.db.repository import StoredReport, newest_reports, reports_for
from app.db.reviews import effective_reviews, reviewed_repos
from app.db.session import Store
from app.services.outcomes import is_local_scan, outcome
from app.services.references import store_only_judge


@dataclass(frozen=True)
class Queued:
    report: StoredReport  # the newest report of the commit
    outcome: Outcome  # as the gate sees it now (not approved)
    tier: str
    review: Review | None  # a stale approval, if one was given under another policy verdict
    previous: str | None = None  # the repo's commit vetted before this one (what a diff compares it with)


def review_queue(store: Store, policy: LoadedPolicy) -> list[Queued]:
    """Commits waiting for a review, the longest-waiting first."""
    with store.session() as session:
        # Only a `review` verdict, or one recorded under another policy (it may re-decide to `review`), can queue.
        candidates = [r for r in newest_reports(session, review_under=policy.sha256) if not is_local_scan(r)]
        repos = reviewed_repos(session, sorted({r.repo_id for r in candidates}))
        reviews = {repo: effective_reviews(session, repo, reports_for(session, repo)) for repo in repos}
        order = activity.commit_order(session, sorted({r.repo_id for r in candidates}))
    queued = []
    judge = store_only_judge(store, policy)
    for report in candidates:
        review = reviews.get(report.repo_id, {}).get(report.id)
        effective = outcome(report, policy, review, judge.of((report.repo_id, report.sha)))
        if effective.verdict == "review" and not effective.approved and not _rejected(review):
            queued.append(Queued(report, effective, tier_of(report.repo_id.partition("/")[0], policy.model.tiers),
                                 review, _before(order.get(report.repo_id, []), report.sha)))
    return sorted(queued, key=lambda q: (q.report.decided_at, q.report.id))


def _before(commits: list[str], sha: str) -> str | None:
    """The commit after ``sha`` in a newest-first list: the one vetted before it."""
    at = commits.index(sha) if sha in commits else len(commits)
    return commits[at + 1] if at + 1 < len(commits) else None


def _rejected(review: Review | None) -> bool:
    return review is not None and review.decision == "reject"


def recent_decisions(store: Store, limit: int = 50) -> list[AuditEntry]:
    """The newest review decisions of any repo, from the audit log."""
    with store.session() as session:
        return audit.newest_of_action(session, "review", limit)


def repo_audit(store: Store, repo_id: str) -> list[AuditEntry]:
    """What the audit log says about ``repo_id``: vets and reviews, newest first. Not its pulls: one row
    per file served would crowd the decisions out (the repo page lists them apart, app.services.pulls)."""
    with store.session() as session:
        return audit.entries_for_repo(session, repo_id, leave_out=(PULL,))
