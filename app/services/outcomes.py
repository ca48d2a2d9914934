"""A stored report's outcome under the active policy: recorded, re-decided, or changed by a review.

Shared by the gate, the listings, the reviews and the judge of referenced repos (references.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime

from app.core.gate import Outcome
from app.core.policy import LoadedPolicy, PolicyFacts, evaluate, facts_from_report_dict
from app.core.policy.engine import depends_on_references, reads_references
from app.core.policy.facts import ReferenceJudge
from app.core.review import Review, apply_review
from app.db.repository import LeanReport, MaybeLean

Resolver = Callable[[str, str], str]  # (repo id, branch or tag) -> 40-hex commit on the hub now


def outcome(report: MaybeLean, policy: LoadedPolicy, review: Review | None = None,
            judge: ReferenceJudge | None = None) -> Outcome:
    """The stored report's effective outcome: its policy outcome as its newest review changed it."""
    if review is not None and review.decision == "approve" and is_local_scan(report):
        review = None  # nobody can vouch that local bytes are the hub's commit: only a reject applies
    return apply_review(policy_outcome(report, policy, judge), review)


def is_local_scan(report: MaybeLean) -> bool:
    """Recorded by `hfvet scan` of local files: never checked against the hub's commit."""
    return not report.endpoint


def policy_outcome(report: MaybeLean, policy: LoadedPolicy, judge: ReferenceJudge | None = None) -> Outcome:
    """The stored report's outcome, re-decided when it was recorded under another policy, or when it
    references other repos and the policy reads them (their approval may have changed since the vet).

    ``judge`` says which referenced repos the store approves now; without one, none is (fail closed).
    """
    references = report.references if reads_references(policy) else ()
    facts = None
    depends = bool(references) and _DEPENDS.get(_depends_key(report, policy)) is not False
    if depends:
        facts = _recorded_facts(report)
        depends = depends_on_references(policy, facts, references)
        _DEPENDS.put(_depends_key(report, policy), depends)
    if report.policy_sha256 == policy.sha256 and not depends:
        verdict = report.verdict
        reasons = list(report.reasons)
        by = f"policy {report.policy_name}"
    else:
        facts = facts or _recorded_facts(report)
        if depends:  # the references as the store judges them now; unknown without a judge (fail closed)
            facts = facts.model_copy(update={"reference_status": list(judge(references) if judge else ())})
        decision = evaluate(policy, facts)
        verdict = decision.verdict.value
        reasons = [f"{r.rule}: {r.message}" for r in decision.reasons]
        by = _redecided_by(report, policy, verdict)
    approved = verdict == "approve"
    if approved and is_local_scan(report):
        # A local scan's bytes were never checked against the hub's commit: it cannot vouch for it.
        approved = False
        reasons.append(LOCAL_SCAN)
    return Outcome(report.sha, approved, verdict, tuple(reasons), report.decided_at, by)


class _Memo:
    """Whether a report's verdict depends on its references, per (report, policy, day): none of them changes.

    Without it every uncached gate answer would re-run the check for every stored report that
    merely mentions a base model (a card's `base_model`), which is most vendor quants.
    """

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[object, ...], bool] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> bool | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: tuple[object, ...], value: bool) -> None:
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


_DEPENDS = _Memo()


def _recorded_facts(report: MaybeLean) -> PolicyFacts:
    """The policy facts the report recorded, to re-decide it: only a report read whole has them."""
    if isinstance(report, LeanReport):  # lean reads are of reports never re-decided: a caller mixed up policies
        raise TypeError(f"report {report.id} was read lean under one policy and re-decided under another")
    return facts_from_report_dict(report.document, f"report {report.id}")


def _depends_key(report: MaybeLean, policy: LoadedPolicy) -> tuple[object, ...]:
    # The report's id with its repo, commit and time: ids alone repeat across stores in one process (tests).
    # Today's date too: a waiver of a rule that reads references may expire.
    return (report.id, report.repo_id, report.sha, report.decided_at, policy.sha256, datetime.now(UTC).date())


def _redecided_by(report: MaybeLean, policy: LoadedPolicy, verdict: str) -> str:
    if report.policy_sha256 != policy.sha256:
        return f"policy {policy.name} (re-decided from the findings recorded under {report.policy_name})"
    if verdict == report.verdict:
        return f"policy {policy.name}"
    return f"policy {policy.name} (re-decided: the referenced repos' approval changed since the vet)"


LOCAL_SCAN = "local-scan: recorded by `hfvet scan`; only `hfvet vet` from the hub approves a commit"
