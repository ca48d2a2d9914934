"""Verdicts, the reasons behind them, and the interim (policy-less) decision."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from app.core.findings import Finding, Severity
from app.core.lineage_facts import Lineage


class Verdict(enum.Enum):
    APPROVE = "approve"
    REVIEW = "review"
    REJECT = "reject"

    @property
    def rank(self) -> int:
        return {"approve": 0, "review": 1, "reject": 2}[self.value]


@dataclass(frozen=True)
class Reason:
    rule: str
    decision: Verdict
    message: str


@dataclass(frozen=True)
class PolicyRef:
    name: str
    sha256: str | None


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    reasons: tuple[Reason, ...]
    policy: PolicyRef
    lineage: Lineage | None = None  # the lineage facts the policy saw, when a store was consulted


INTERIM_POLICY = PolicyRef("interim-severity", None)

# Reason ids the policy engine itself emits, whatever the policy (a policy rule may not take them: schema.py).
ENGINE_REASON_IDS = frozenset({"default", "fail-closed", "floor-critical", "floor-unscanned-code",
                               "signature-invalid", "signature-required", "unsafe-policy", "waiver",
                               "waiver-expired"})


def most_severe(verdicts: list[Verdict], default: Verdict) -> Verdict:
    return max(verdicts, key=lambda v: v.rank, default=default)


def interim_decision(findings: list[Finding], unscanned: list[str]) -> Decision:
    """Severity-only decision used when no policy is given.

    critical/high -> reject, medium -> review, any unscanned file -> at least review.
    """
    reasons: list[Reason] = []
    worst = max((f.severity for f in findings), key=lambda s: s.rank, default=Severity.INFO)
    if worst.rank >= Severity.HIGH.rank:
        count = sum(1 for f in findings if f.severity.rank >= Severity.HIGH.rank)
        reasons.append(Reason("high-or-critical", Verdict.REJECT, f"{count} high or critical finding(s)"))
    elif worst is Severity.MEDIUM:
        count = sum(1 for f in findings if f.severity is Severity.MEDIUM)
        reasons.append(Reason("medium", Verdict.REVIEW, f"{count} medium finding(s)"))
    if unscanned:
        reasons.append(
            Reason("unscanned", Verdict.REVIEW, f"{len(unscanned)} file(s) not fully scanned")
        )
    verdict = most_severe([r.decision for r in reasons], Verdict.APPROVE)
    return Decision(verdict, tuple(reasons), INTERIM_POLICY)
