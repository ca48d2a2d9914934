"""The engine's floor: critical findings and unscanned code are never approved, whatever the rules."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

import pytest

from app.core.policy import evaluate, explain, load_policy
from app.core.verdict import Reason, Verdict

from .helpers import MINIMAL, POLICIES, REV, facts, finding, policy

TODAY = date(2026, 6, 1)
THIRD_PARTY = "canada-quant/model"

LAX = """\
name: lax
description: a careless custom policy
tiers:
  vendor-official: [nvidia]
rules:
  - id: lax
    description: approves without looking at the content
    when: {when}
    decision: {decision}
default: review
"""


def lax(when: str, decision: str = "approve") -> str:
    return LAX.format(when=when, decision=decision)


def rule_ids(reasons: Sequence[Reason]) -> list[str]:
    return [r.rule for r in reasons]


@pytest.mark.parametrize("when", ['repo.tier == "third-party"', "1 == 1", "true || false",
                                  "size(findings) >= 0"])
def test_an_approve_rule_cannot_approve_a_critical_finding(tmp_path: Path, when: str) -> None:
    loaded = policy(tmp_path, lax(when))
    decision = evaluate(loaded, facts(repo=THIRD_PARTY, findings=[finding("pickle-dangerous-global", "critical")]))
    assert decision.verdict is Verdict.REJECT
    floor = [r for r in decision.reasons if r.rule == "floor-critical"]
    assert len(floor) == 1 and floor[0].decision is Verdict.REJECT
    assert "pickle-dangerous-global" in floor[0].message
    # The same rule on clean content is the policy's own business: the floor stays out of it.
    assert evaluate(loaded, facts(repo=THIRD_PARTY)).verdict is Verdict.APPROVE


def test_a_review_rule_is_raised_to_reject_on_a_critical_finding(tmp_path: Path) -> None:
    loaded = policy(tmp_path, lax("1 == 1", "review"))
    decision = evaluate(loaded, facts(findings=[finding("jinja-ssti", "critical", "tokenizer_config.json")]))
    assert decision.verdict is Verdict.REJECT
    assert rule_ids(decision.reasons) == ["lax", "floor-critical"]


def test_a_rule_waiver_cannot_lift_the_critical_floor(tmp_path: Path) -> None:
    text = MINIMAL + f"""\
waivers:
  - {{repo: nvidia/model, revision: "{REV}", rule: critical, reason: r, approver: bob, expires: 2030-01-01}}
"""
    decision = evaluate(policy(tmp_path, text), facts(findings=[finding("x", "critical")]), today=TODAY)
    assert decision.verdict is Verdict.REJECT
    assert "floor-critical" in rule_ids(decision.reasons)


def test_a_critical_finding_waived_for_the_exact_commit_still_needs_a_human(tmp_path: Path) -> None:
    text = MINIMAL + f"""\
waivers:
  - repo: nvidia/model
    revision: "{REV}"
    finding: {{rule: pickle-dangerous-global}}
    reason: false positive, read by hand
    approver: alice
    expires: 2030-01-01
"""
    found = [finding("pickle-dangerous-global", "critical")]
    evaluation = explain(policy(tmp_path, text), facts(findings=found), today=TODAY)
    assert evaluation.decision.verdict is Verdict.REVIEW
    assert rule_ids(evaluation.decision.reasons) == ["vendor-clean", "floor-critical", "waiver"]
    assert "waived" in evaluation.decision.reasons[1].message


@pytest.mark.parametrize("fmt", ["pickle", "torch-legacy", "pytorch-zip", "numpy", "numpy-npz", "zip",
                                 "keras", "zlib", "gzip", "lz4", "7z", "elf", "pe", "macho", "ar", "wheel"])
def test_an_unscanned_code_file_is_never_approved(tmp_path: Path, fmt: str) -> None:
    unvetted = [{"path": "model.bin", "format": fmt, "scanned": False}]
    loaded = policy(tmp_path, lax('repo.tier == "third-party"'))
    decision = evaluate(loaded, facts(repo=THIRD_PARTY, files=unvetted))
    assert decision.verdict is Verdict.REVIEW
    floor = [r for r in decision.reasons if r.rule == "floor-unscanned-code"]
    assert len(floor) == 1 and "model.bin" in floor[0].message and fmt in floor[0].message


def test_an_unscanned_data_file_keeps_the_general_fail_closed_reason(tmp_path: Path) -> None:
    unvetted = [{"path": "vocab.txt", "format": "text", "scanned": False}]
    decision = evaluate(policy(tmp_path), facts(files=unvetted))
    assert decision.verdict is Verdict.REVIEW
    assert rule_ids(decision.reasons) == ["vendor-clean", "fail-closed"]


def test_the_floor_adds_no_reason_when_the_rules_already_reject(tmp_path: Path) -> None:
    found = [finding("pickle-dangerous-global", "critical")]
    decision = evaluate(policy(tmp_path), facts(findings=found))
    assert (decision.verdict, rule_ids(decision.reasons)) == (Verdict.REJECT, ["critical"])


def test_only_an_unsafe_policy_is_below_the_floor() -> None:
    loaded = load_policy(POLICIES / "unsafe-allow-all.yaml")
    hostile = facts(repo=THIRD_PARTY, findings=[finding("pickle-dangerous-global", "critical")],
                    files=[{"path": "model.pkl", "format": "pickle", "scanned": False}])
    assert evaluate(loaded, hostile).verdict is Verdict.APPROVE


@pytest.mark.parametrize(("name", "rule"), [("default.yaml", "critical-finding"),
                                            ("strict.yaml", "high-or-critical-finding")])
def test_committed_policies_reject_a_critical_finding_even_when_its_rule_is_waived(
    tmp_path: Path, name: str, rule: str
) -> None:
    waiver = (f'  - {{repo: nvidia/model, revision: "*", rule: {rule}, reason: r, approver: a, '
              'expires: 2030-01-01}\n')
    text = (POLICIES / name).read_text(encoding="utf-8").replace("waivers: []", "waivers:\n" + waiver)
    if "waivers:" not in text:
        text += "waivers:\n" + waiver
    decision = evaluate(policy(tmp_path, text), facts(findings=[finding("pickle-dangerous-global", "critical")]),
                        today=TODAY)
    assert decision.verdict is Verdict.REJECT
    assert "floor-critical" in rule_ids(decision.reasons)
