"""Waivers: exceptions as data. Applied before evaluation; expired ones are reported, not applied."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from fnmatch import fnmatchcase

from app.core.findings import Severity
from app.core.policy.facts import FindingFact, PolicyFacts
from app.core.policy.schema import Waiver
from app.core.verdict import Reason, Verdict

# Informational reasons never raise the verdict: they carry the lowest decision.
INFO = Verdict.APPROVE


@dataclass
class WaiverOutcome:
    findings: list[FindingFact]
    waived: list[FindingFact] = field(default_factory=list)
    waived_rules: set[str] = field(default_factory=set)
    reasons: list[Reason] = field(default_factory=list)


def apply_waivers(waivers: list[Waiver], facts: PolicyFacts, today: date) -> WaiverOutcome:
    outcome = WaiverOutcome(findings=list(facts.findings))
    for waiver in waivers:
        if not _covers(waiver, facts):
            continue
        if today > waiver.expires:
            outcome.reasons.append(Reason("waiver-expired", INFO, f"NOT applied, expired {waiver.expires}: "
                                          f"{_describe(waiver)}"))
        elif waiver.rule is not None:
            outcome.waived_rules.add(waiver.rule)
            message = f"rule {waiver.rule!r} waived: {_describe(waiver)}"
            outcome.reasons.append(Reason("waiver", INFO, message))
        else:
            _drop_findings(waiver, outcome)
    return outcome


def _covers(waiver: Waiver, facts: PolicyFacts) -> bool:
    repo = facts.repo
    if repo.id is None or waiver.repo.casefold() != repo.id.casefold():
        return False
    return waiver.revision == "*" or waiver.revision == repo.revision


def _drop_findings(waiver: Waiver, outcome: WaiverOutcome) -> None:
    match = waiver.finding
    assert match is not None  # noqa: S101 - the schema guarantees rule xor finding
    hit = [f for f in outcome.findings if fnmatchcase(f.rule, match.rule) and fnmatchcase(f.path, match.path)]
    kept = ""
    if waiver.revision == "*":
        # Only someone who saw the exact commit may hide a critical finding: a `*` waiver
        # would also hide the critical findings of every future revision.
        critical = [f for f in hit if f.severity is Severity.CRITICAL]
        hit = [f for f in hit if f not in critical]
        kept = f"; {len(critical)} critical kept (a `*` revision cannot waive them)" if critical else ""
    outcome.findings = [f for f in outcome.findings if f not in hit]
    outcome.waived.extend(hit)
    outcome.reasons.append(Reason("waiver", INFO, f"{len(hit)} finding(s) {match.rule!r} at {match.path!r} "
                                  f"waived{kept}: {_describe(waiver)}"))


def _describe(waiver: Waiver) -> str:
    return (f"{waiver.repo}@{waiver.revision[:12]} until {waiver.expires}, "
            f"approved by {waiver.approver}: {waiver.reason}")
