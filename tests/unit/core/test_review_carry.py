"""Which review applies to each re-vet of a commit, and the findings fingerprint it compares (app.core.review_carry)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from app.core.gate import Outcome
from app.core.review import Review, apply_review, refusal
from app.core.review_carry import CommitReport, Item, carry_reviews, findings_fingerprint, review_items

A = "a" * 40
T0 = datetime(2026, 12, 1, tzinfo=UTC)


def document(*findings: dict[str, Any], seconds: float = 1.5, unscanned: tuple[str, ...] = ()) -> dict[str, Any]:
    files = [{"path": "config.json", "scanned": True}, *({"path": p, "scanned": False} for p in unscanned)]
    return {"findings": list(findings), "files": files, "stats": {"files": 1, "seconds": seconds},
            "verdict": "review", "reasons": [{"rule": "r", "decision": "review", "message": "m"}]}


def finding(rule: str = "remote-code", path: str = "config.json", **changes: Any) -> dict[str, Any]:
    return {"path": path, "member": None, "scanner": "config", "rule": rule, "severity": "medium",
            "message": "auto_map names code", "evidence": "AutoModel"} | changes


def review(decision: str, report_id: int = 1) -> Review:
    return Review(7, report_id, decision, "read the code", "token:alice", "reviewer", T0, "review")


def carried(own: dict[int, Review], *documents: dict[str, Any], keep_fingerprints: bool = True) -> dict[int, Review]:
    """carry_reviews over reports 1..n of one commit, oldest first."""
    reports = [CommitReport(i, A, findings_fingerprint(d) if keep_fingerprints else None)
               for i, d in enumerate(documents, start=1)]
    read: list[int] = []

    def items_of(report_id: int) -> list[Item]:
        read.append(report_id)
        return review_items(documents[report_id - 1])

    effective = carry_reviews(own, reports, items_of)
    if keep_fingerprints and len({r.fingerprint for r in reports}) == 1:
        assert read == []  # identical findings are settled by the fingerprints alone
    return effective


def test_the_fingerprint_ignores_timing_and_order_and_changes_with_any_finding() -> None:
    base = document(finding(), finding("pickle-global", "model.bin"))
    shuffled = document(finding("pickle-global", "model.bin"), finding(), seconds=99.0)
    shuffled["stats"]["bytes_read"] = 12
    assert findings_fingerprint(base) == findings_fingerprint(shuffled) == findings_fingerprint(copy.deepcopy(base))
    different = [document(finding(), finding("pickle-global", "model.bin"), finding("new-rule")),
                 document(finding(), finding("pickle-global", "model.bin", message="GLOBAL os.system")),
                 document(finding(), finding("pickle-global", "model.bin", severity="high")),
                 document(finding(), finding("pickle-global", "model.bin", member="data.pkl")),
                 document(finding(), finding("pickle-global", "model.bin"), finding("pickle-global", "model.bin")),
                 document(finding(), finding("pickle-global", "model.bin"), unscanned=("model.bin",))]
    prints = {findings_fingerprint(d) for d in different}
    assert len(prints) == len(different) and findings_fingerprint(base) not in prints


def test_an_approval_carries_to_a_re_vet_with_the_same_findings() -> None:
    same = document(finding())
    effective = carried({1: review("approve")}, same, document(finding(), seconds=9.0), same)
    assert effective[2] == effective[3] == review("approve")


def test_an_approval_carries_when_the_fingerprints_were_not_kept_and_the_findings_are_the_same() -> None:
    effective = carried({1: review("approve")}, document(finding()), document(finding()), keep_fingerprints=False)
    assert effective[2] == review("approve")


def test_an_approval_carries_when_a_re_vet_finds_less() -> None:
    effective = carried({1: review("approve")}, document(finding(), finding("pickle-global")), document(finding()))
    assert effective[2] == review("approve")


def test_a_new_finding_withdraws_the_approval_and_names_it() -> None:
    effective = carried({1: review("approve")}, document(finding()),
                        document(finding(), finding("rule-a", "f.py"), unscanned=("g.bin",)))
    withdrawn = effective[2]
    assert withdrawn.withdrawn == (
        "the review of report 1 no longer applies: the re-vet found 2 new findings: rule-a (medium) in f.py, "
        "g.bin not scanned (the approval by token:alice (reviewer) did not see them); it needs a new review")
    outcome = Outcome(A, False, "review", ("remote-code: auto_map",), T0, "policy default")
    answer = apply_review(outcome, withdrawn)
    assert answer.approved is False and answer.reasons == (withdrawn.withdrawn, "remote-code: auto_map")
    assert refusal(outcome, withdrawn, "approve", "reviewer") is None  # a new review may settle it


def test_an_approval_is_compared_with_what_the_reviewer_saw_not_with_the_last_re_vet() -> None:
    seen, more = document(finding()), document(finding(), finding("rule-a"))
    effective = carried({1: review("approve")}, seen, more, seen)
    assert effective[2].withdrawn and effective[3] == review("approve")


def test_a_reject_carries_whatever_the_re_vet_finds_and_a_newer_review_replaces_it() -> None:
    effective = carried({1: review("reject"), 3: review("approve", 3)},
                        document(finding()), document(), document(finding("rule-a")), document(finding("rule-a")))
    assert effective[2] == review("reject") and effective[3] == effective[4] == review("approve", 3)


def test_many_new_findings_are_counted_past_the_first_five() -> None:
    many = document(*(finding(f"rule-{i}") for i in range(8)))
    effective = carried({1: review("approve")}, document(), many)
    assert "8 new findings: rule-0 (medium) in config.json" in str(effective[2].withdrawn)
    assert ", and 3 more" in str(effective[2].withdrawn)
