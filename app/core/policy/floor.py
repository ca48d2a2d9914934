"""The floor under every policy: what no rule, default or waiver can turn into `approve`.

It sits under the rules, so a careless custom rule (`when: 1 == 1`, `repo.tier == "third-party"`)
or a waiver cannot approve malware or code nobody looked at. Only a policy explicitly marked
`unsafe: true` is exempt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.core.findings import Severity
from app.core.formats.detect import (
    EXECUTABLES,
    INFLATABLE,
    LOADS_THROUGH_PICKLE,
    NESTED_ARCHIVES,
    PEER_ZIP_KINDS,
    UNSUPPORTED_COMPRESSION,
    Format,
)
from app.core.policy.facts import FileFact, FindingFact, PolicyFacts
from app.core.policy.sources import installer_of
from app.core.verdict import Reason, Verdict, most_severe

FLOOR_CRITICAL = "floor-critical"
FLOOR_UNSCANNED_CODE = "floor-unscanned-code"
FLOOR_UNSCANNED = "fail-closed"  # the original floor's id, kept so recorded reasons stay comparable
FLOOR_RULE_IDS = (FLOOR_CRITICAL, FLOOR_UNSCANNED_CODE, FLOOR_UNSCANNED)

# Formats whose loading runs pickle (bare, zipped, compressed as joblib writes it, numpy object
# arrays, inside archives) or native code, or that hold Keras Lambda bytecode (keras, h5).
# Unscanned, such a file is code nobody looked at.
CODE_FORMATS = (
    frozenset(LOADS_THROUGH_PICKLE) | PEER_ZIP_KINDS | NESTED_ARCHIVES | INFLATABLE
    | UNSUPPORTED_COMPRESSION | EXECUTABLES | {Format.NUMPY, Format.KERAS, Format.HDF5, Format.WHEEL}
)


def apply_floor(
    facts: PolicyFacts,
    findings: list[FindingFact],
    waived: list[FindingFact],
    ruled: tuple[Verdict, list[Reason]],
    installers: Mapping[str, Sequence[str]] | None = None,
) -> tuple[Verdict, list[Reason]]:
    """Raise the rules' verdict to the floor; each floor reason that raised it is recorded.

    `findings` are those left after waivers, `waived` those the waivers removed. A download-and-execute
    of a listed installer's documented script (`installers`) is the policy's to judge, not the floor's.
    """
    verdict, reasons = ruled
    if installers:
        findings = [f for f in findings if installer_of(f.rule, f.source, installers) is None]
        waived = [f for f in waived if installer_of(f.rule, f.source, installers) is None]
    raising = [r for r in floor_reasons(facts, findings, waived) if r.decision.rank > verdict.rank]
    if not raising:
        return verdict, reasons
    return most_severe([verdict, *(r.decision for r in raising)], verdict), [*reasons, *raising]


def floor_reasons(facts: PolicyFacts, findings: list[FindingFact], waived: list[FindingFact]) -> list[Reason]:
    reasons = [_critical_reason(findings, waived)]
    unscanned = [f for f in facts.files if not f.scanned]
    code = [f for f in unscanned if f.format in CODE_FORMATS]
    reasons.append(_unscanned_code_reason(code) if code else _unscanned_reason(unscanned))
    return [r for r in reasons if r is not None]


def _critical_reason(findings: list[FindingFact], waived: list[FindingFact]) -> Reason | None:
    critical = [f for f in findings if f.severity is Severity.CRITICAL]
    if critical:
        return Reason(FLOOR_CRITICAL, Verdict.REJECT, f"{_count(critical)}: never approved, whatever the "
                      "policy's rules or waivers say")
    # Only a waiver pinned to the exact commit can drop a critical finding: that is a human's word
    # on this revision, so it stops the rejection but not the review.
    waived_critical = [f for f in waived if f.severity is Severity.CRITICAL]
    if waived_critical:
        return Reason(FLOOR_CRITICAL, Verdict.REVIEW, f"{_count(waived_critical)} waived for this commit: "
                      "a critical finding is never approved automatically")
    return None


def _unscanned_code_reason(code: list[FileFact]) -> Reason:
    first = code[0]
    return Reason(FLOOR_UNSCANNED_CODE, Verdict.REVIEW,
                  f"{len(code)} file(s) that load through pickle or run native code not fully vetted "
                  f"(e.g. {first.path}, {first.format}): never approved")


def _unscanned_reason(unscanned: list[FileFact]) -> Reason | None:
    if not unscanned:
        return None
    return Reason(FLOOR_UNSCANNED, Verdict.REVIEW,
                  f"{len(unscanned)} file(s) not fully vetted (e.g. {unscanned[0].path}): never approved")


def _count(critical: list[FindingFact]) -> str:
    first = critical[0]
    return f"{len(critical)} critical finding(s) (e.g. {first.rule} in {first.path})"
