"""The pure gate rule, case by case (DESIGN §6.3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.core.gate import (
    Approved,
    Denied,
    Moved,
    NotVetted,
    Outcome,
    Superseded,
    decide_gate,
    newest_approved,
    superseded,
)
from app.core.ids import is_commit

T0 = datetime(2026, 12, 1, tzinfo=UTC)
A, B, C = "a" * 40, "b" * 40, "c" * 40


def outcome(sha: str, approved: bool, minutes: int = 0) -> Outcome:
    verdict = "approve" if approved else "reject"
    return Outcome(sha, approved, verdict, (), T0 + timedelta(minutes=minutes), "policy default")


def test_an_exact_commit_is_answered_from_the_store() -> None:
    assert decide_gate(A, A, [outcome(A, True)]) == Approved(outcome(A, True))
    assert isinstance(decide_gate(B, B, [outcome(A, True), outcome(B, False)]), Denied)
    assert decide_gate(C, C, [outcome(A, True)]) == NotVetted(C)


def test_the_newest_outcome_of_a_commit_counts() -> None:
    # approved first, then re-vetted under a stricter policy and rejected: not approved any more
    answer = decide_gate(A, A, [outcome(A, True, 0), outcome(A, False, 5)])
    assert isinstance(answer, Denied)


def test_a_branch_whose_head_is_approved_passes() -> None:
    assert isinstance(decide_gate("main", A, [outcome(A, True)]), Approved)


def test_a_branch_that_moved_past_the_approved_commit_names_it() -> None:
    answer = decide_gate("main", B, [outcome(A, True)])
    assert answer == Moved(B, outcome(A, True))


def test_a_branch_never_vetted_is_not_vetted() -> None:
    assert decide_gate("main", B, []) == NotVetted(B)


def test_a_branch_whose_head_was_rejected_is_denied_even_with_an_older_approval() -> None:
    assert isinstance(decide_gate("main", B, [outcome(A, True), outcome(B, False, 1)]), Denied)


def test_without_a_revision_the_newest_approved_wins() -> None:
    answer = decide_gate(None, None, [outcome(A, True, 0), outcome(B, True, 9), outcome(C, False, 20)])
    assert isinstance(answer, Approved) and answer.outcome.sha == B
    assert isinstance(decide_gate(None, None, [outcome(C, False)]), Denied)
    assert decide_gate(None, None, []) == NotVetted(None)


def test_is_commit() -> None:
    assert is_commit(A) and not is_commit("main") and not is_commit(A.upper()) and not is_commit(None)


def test_without_a_revision_a_commit_rejected_since_its_approval_is_not_the_answer() -> None:
    # A was approved, then re-vetted and rejected: the newest approved commit is B, not A.
    outcomes = [outcome(B, True, 0), outcome(A, True, 1), outcome(A, False, 5)]
    answer = decide_gate(None, None, outcomes)
    assert isinstance(answer, Approved) and answer.outcome.sha == B
    assert isinstance(decide_gate(None, None, [outcome(A, True, 0), outcome(A, False, 5)]), Denied)


def test_a_moved_branch_never_names_a_commit_rejected_since() -> None:
    answer = decide_gate("main", C, [outcome(B, True, 0), outcome(A, True, 1), outcome(A, False, 5)])
    assert answer == Moved(C, outcome(B, True, 0))
    assert decide_gate("main", C, [outcome(A, True, 0), outcome(A, False, 5)]) == NotVetted(C)


def test_a_newer_rejected_commit_supersedes_the_approved_one_which_stays_the_answer() -> None:
    outcomes = [outcome(A, True, 0), outcome(B, False, 5)]  # main moved from A to B, and B was rejected
    assert decide_gate(None, None, outcomes) == Approved(outcome(A, True, 0))  # the answer is unchanged
    assert newest_approved(outcomes) == outcome(A, True, 0)
    assert superseded(outcomes) == Superseded(outcome(B, False, 5), outcome(A, True, 0))


def test_nothing_is_superseded_when_the_newest_is_approved_or_nothing_is() -> None:
    assert superseded([outcome(A, False, 0), outcome(B, True, 5)]) is None  # the newest is approved
    assert superseded([outcome(A, False, 0), outcome(B, False, 5)]) is None  # nothing to deploy at all
    assert superseded([]) is None
    assert superseded([outcome(A, True, 0), outcome(B, False, 5), outcome(A, True, 9)]) is None  # A re-vetted last
    # approved once and rejected by a re-vet: the commit is not approved, so nothing older is deployable
    assert superseded([outcome(A, True, 0), outcome(A, False, 5)]) is None
