"""Human reviews of stored verdicts: what a review changes, and which reviews may be given. Pure.

A review applies to the report it reviewed. An approval covers the verdict the reviewer saw and
anything milder: approving a `review` does not cover a `reject` that a later policy re-decides
the same findings to (fail closed); an admin's override of a `reject` covers everything. A
reject always applies, and carries to later vets of the same commit until a review of one of them
says otherwise; an approval carries to them while they find nothing new (app.core.review_carry).
Of a report's reviews the newest is the effective one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from app.core.gate import Outcome

DECISIONS = ("approve", "reject")
_SEVERITY = {"approve": 0, "review": 1, "reject": 2}
# Who outranks whom: a reject binds every role below the one that gave it (an admin's veto is lifted
# only by an admin). An unknown role ranks lowest.
ROLE_RANK = {"vetter": 0, "reviewer": 1, "admin": 2}


@dataclass(frozen=True)
class Review:
    """One stored review of one report."""

    id: int
    report_id: int
    decision: str  # approve | reject
    reason: str
    reviewer: str  # the actor: "token:<name>" or "cli:<user>"
    role: str
    at: datetime
    verdict: str | None  # the policy verdict the reviewer saw (None: recorded before it was kept)
    policy_sha256: str | None = None
    # Set on an approval of an earlier report of the commit that a re-vet found something new beside:
    # why it no longer applies (app.core.review_carry). Such a review approves nothing.
    withdrawn: str | None = None


@dataclass(frozen=True)
class Refusal:
    """Why a review may not be given now; ``kind`` is a stable code."""

    kind: str  # already-approved | already-rejected | admin-required (a reject, or an admin's veto, to lift)
    message: str


def covers(review: Review, verdict: str) -> bool:
    """Does this approval still cover ``verdict``? (An unknown reviewed verdict counts as `review`.)"""
    seen = review.verdict if review.verdict in _SEVERITY else "review"
    return review.decision == "approve" and _SEVERITY.get(verdict, 2) <= _SEVERITY[seen]


def apply_review(policy_outcome: Outcome, review: Review | None) -> Outcome:
    """The effective outcome of a report: its policy outcome as changed by its newest review."""
    if review is None:
        return policy_outcome
    if review.withdrawn:
        if policy_outcome.approved:
            return policy_outcome
        return replace(policy_outcome, reasons=(review.withdrawn, *policy_outcome.reasons))
    by = f"{review.reviewer} ({review.role})"
    settled = replace(policy_outcome, decided_at=review.at, decided_by=by, vetted_at=policy_outcome.recorded)
    if review.decision == "reject":
        return replace(settled, approved=False,
                       reasons=(f"rejected by {by}: {review.reason}", *policy_outcome.reasons))
    if covers(review, policy_outcome.verdict):
        return replace(settled, approved=True)
    seen = review.verdict or "review"
    stale = (f"the review of report {review.report_id} no longer applies: the policy verdict changed from "
             f"{seen} to {policy_outcome.verdict} (the approval by {by} covered a `{seen}` verdict); "
             f"it needs a new review")
    return replace(policy_outcome, approved=False, reasons=(stale, *policy_outcome.reasons))


def _outranks(giver: str, role: str) -> bool:
    return ROLE_RANK.get(giver, 0) > ROLE_RANK.get(role, 0)


def refusal(policy_outcome: Outcome, current: Review | None, decision: str, role: str) -> Refusal | None:
    """Why ``decision`` by a ``role`` may not be given on top of the report's newest review, if so."""
    if current is not None and current.withdrawn:
        current = None  # an approval a re-vet withdrew settles nothing
    effective = apply_review(policy_outcome, current)
    verdict = policy_outcome.verdict
    if decision == "approve":
        if effective.approved:
            return Refusal("already-approved", f"already approved ({effective.decided_by})")
        if current is not None and current.decision == "reject" and _outranks(current.role, role):
            return Refusal("admin-required", f"rejected by {current.reviewer} ({current.role}): "
                           f"lifting a veto needs the {current.role} role or higher")
        if verdict == "reject" and role != "admin":
            return Refusal("admin-required", "the policy rejects it: overriding a reject needs the admin role")
        return None
    if current is not None and current.decision == "reject":
        return Refusal("already-rejected", f"already rejected by {current.reviewer} ({current.role})")
    if current is None and verdict == "reject":
        return Refusal("already-rejected", "already rejected by the policy")
    return None
