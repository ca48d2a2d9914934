"""What a review changes and which reviews may be given: the pure rules (app.core.review)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.core.gate import Approved, Denied, Outcome, decide_gate
from app.core.review import Review, apply_review, covers, refusal

T0 = datetime(2026, 12, 1, tzinfo=UTC)
A, B = "a" * 40, "b" * 40


def policy(verdict: str, sha: str = A, minutes: int = 0) -> Outcome:
    return Outcome(sha, verdict == "approve", verdict, (f"rule: {verdict}",), T0 + timedelta(minutes=minutes),
                   "policy default")


def review(decision: str, seen: str | None = "review", role: str = "reviewer", minutes: int = 10) -> Review:
    return Review(1, 1, decision, "looked at it", "token:alice", role, T0 + timedelta(minutes=minutes), seen)


def kind(outcome: Outcome, current: Review | None, decision: str, role: str) -> str | None:
    refused = refusal(outcome, current, decision, role)
    return None if refused is None else refused.kind


def test_no_review_leaves_the_policy_outcome() -> None:
    assert apply_review(policy("review"), None) == policy("review")


def test_an_approved_review_verdict_is_approved_by_the_reviewer_at_review_time() -> None:
    effective = apply_review(policy("review"), review("approve"))
    assert effective.approved is True and effective.verdict == "review"
    assert effective.decided_by == "token:alice (reviewer)" and effective.decided_at == T0 + timedelta(minutes=10)
    assert effective.recorded == T0  # still ordered by when the report was recorded


def test_a_reviewers_reject_stays_refused_and_says_why() -> None:
    for verdict in ("approve", "review"):
        effective = apply_review(policy(verdict), review("reject", seen=verdict))
        assert effective.approved is False
        assert effective.reasons[0] == "rejected by token:alice (reviewer): looked at it"


def test_an_approval_of_review_does_not_cover_a_reject_the_active_policy_re_decides() -> None:
    effective = apply_review(policy("reject"), review("approve", seen="review"))
    assert effective.approved is False and effective.decided_by == "policy default"
    assert "needs a new review" in effective.reasons[0]


def test_an_admin_override_of_reject_covers_it() -> None:
    effective = apply_review(policy("reject"), review("approve", seen="reject", role="admin"))
    assert effective.approved is True and effective.decided_by == "token:alice (admin)"


@pytest.mark.parametrize(("seen", "now", "covered"), [
    ("review", "approve", True), ("review", "review", True), ("review", "reject", False),
    ("reject", "reject", True), (None, "review", True), (None, "reject", False), ("approve", "review", False),
])
def test_an_approval_covers_what_the_reviewer_saw_and_anything_milder(seen: str | None, now: str,
                                                                      covered: bool) -> None:
    assert covers(review("approve", seen=seen), now) is covered


def test_approving_what_is_approved_is_refused() -> None:
    assert kind(policy("approve"), None, "approve", "admin") == "already-approved"
    assert kind(policy("review"), review("approve"), "approve", "reviewer") == "already-approved"


def test_overriding_a_reject_needs_an_admin() -> None:
    assert kind(policy("reject"), None, "approve", "reviewer") == "admin-required"
    assert kind(policy("reject"), None, "approve", "admin") is None
    # a reviewer's approval the new policy no longer covers: approving again needs an admin too
    assert kind(policy("reject"), review("approve"), "approve", "reviewer") == "admin-required"


def test_rejecting_what_is_rejected_is_refused() -> None:
    assert kind(policy("reject"), None, "reject", "reviewer") == "already-rejected"
    assert kind(policy("review"), review("reject"), "reject", "admin") == "already-rejected"


def test_what_may_be_given() -> None:
    assert kind(policy("review"), None, "approve", "reviewer") is None
    assert kind(policy("review"), None, "reject", "reviewer") is None
    assert kind(policy("approve"), None, "reject", "reviewer") is None  # a veto of a policy approve
    assert kind(policy("review"), review("approve"), "reject", "reviewer") is None  # a change of mind
    assert kind(policy("review"), review("reject"), "approve", "reviewer") is None
    assert kind(policy("reject"), review("approve", seen="reject", role="admin"), "reject", "reviewer") is None


def test_the_gate_orders_reviewed_outcomes_by_when_they_were_vetted() -> None:
    # A was vetted first and approved by a reviewer later; B was vetted later and approved by policy:
    # the newest approved commit is B, however late A's review came.
    reviewed = apply_review(policy("review", A, minutes=0), review("approve", minutes=60))
    answer = decide_gate(None, None, [reviewed, policy("approve", B, minutes=5)])
    assert isinstance(answer, Approved) and answer.outcome.sha == B


def test_a_review_applies_to_the_report_it_reviewed_not_to_a_later_vet() -> None:
    reviewed = apply_review(policy("review", A, minutes=0), review("approve", minutes=60))
    answer = decide_gate(A, A, [reviewed, policy("review", A, minutes=5)])
    assert isinstance(answer, Denied)  # the re-vet at minute 5 has no review yet: fail closed


def test_an_admins_veto_binds_reviewers() -> None:
    # issue 25: an admin rejects a policy-approved commit; a reviewer's approval must not lift it.
    vetoed = review("reject", seen="approve", role="admin")
    assert kind(policy("approve"), vetoed, "approve", "reviewer") == "admin-required"
    assert kind(policy("review"), vetoed, "approve", "reviewer") == "admin-required"
    assert kind(policy("approve"), vetoed, "approve", "admin") is None  # the same role may lift it
    # a reviewer's veto is lifted by a reviewer (a change of mind) or an admin
    assert kind(policy("approve"), review("reject", seen="approve"), "approve", "reviewer") is None
