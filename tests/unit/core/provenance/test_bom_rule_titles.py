"""The BOM calls only the engine's own reasons built in; a rule of a policy not at hand says so (issue 29)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime

from app.core.provenance.bom import bom_json
from app.core.provenance.bom_context import BomContext
from app.core.verdict import Decision, Reason, Verdict
from tests.unit.core.provenance.test_bom import quant_report, valid

BARE = BomContext(timestamp=datetime(2026, 5, 1, tzinfo=UTC), serial=uuid.uuid4(), hfvet_version="1")


def _titles(decision: Decision) -> dict[str, str]:
    doc = valid(bom_json(replace(quant_report(), decision=decision), BARE))
    return {r["identifier"]: r["title"] for r in doc["definitions"]["standards"][0]["requirements"]}


def test_a_rule_of_the_deciding_policy_not_at_hand_is_not_called_built_in() -> None:
    policy = quant_report().decision.policy
    assert policy.sha256 is not None
    reasons = (Reason("unapproved-reference", Verdict.REVIEW, "loads other/code"),
               Reason("floor-critical", Verdict.REJECT, "1 critical finding(s)"),
               Reason("signature-required", Verdict.REJECT, "not signed"))
    titles = _titles(Decision(Verdict.REJECT, reasons, policy))
    assert titles["unapproved-reference"] == (f"unapproved-reference: a rule of policy {policy.name} "
                                              f"(sha256 {policy.sha256}): its text is not at hand")
    assert titles["floor-critical"] == "floor-critical (applied by hfvet with every policy)"
    assert titles["signature-required"] == "signature-required (applied by hfvet with every policy)"


def test_the_interim_verdicts_rules_are_named_as_hfvets_own() -> None:
    from app.core.verdict import INTERIM_POLICY

    titles = _titles(Decision(Verdict.REVIEW, (Reason("medium", Verdict.REVIEW, "1 medium finding(s)"),),
                              INTERIM_POLICY))
    assert titles["medium"] == "medium (hfvet's interim severity verdict: no policy)"
