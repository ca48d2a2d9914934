"""Evaluation: most severe wins, defaults, waivers, fail-closed errors, pipeline wiring."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import pytest

from app.core import report_json
from app.core.pipeline import vet
from app.core.policy import evaluate, explain, facts_from_report_dict, load_policy, make_decide
from app.core.verdict import Reason, Verdict
from app.sources.local import LocalSource

from .helpers import MINIMAL, POLICIES, REV, facts, finding, policy

TODAY = date(2026, 6, 1)


def rules_of(reasons: Sequence[Reason]) -> list[str]:
    return [r.rule for r in reasons]


def test_most_severe_fired_rule_wins(tmp_path: Path) -> None:
    decision = evaluate(policy(tmp_path), facts(findings=[finding("pickle-dangerous-global", "critical")]))
    assert decision.verdict is Verdict.REJECT
    assert rules_of(decision.reasons) == ["critical"]
    assert decision.policy.name == "mini"


def test_no_rule_fired_gives_the_tier_default(tmp_path: Path) -> None:
    text = MINIMAL.replace("default: review", "default: {vendor-official: approve, third-party: reject}")
    loaded = policy(tmp_path, text)
    third = evaluate(loaded, facts(repo="someone/model"))
    assert (third.verdict, rules_of(third.reasons)) == (Verdict.REJECT, ["default"])
    assert "third-party" in third.reasons[0].message


def test_policy_ref_carries_name_and_sha256(tmp_path: Path) -> None:
    loaded = policy(tmp_path)
    decision = evaluate(loaded, facts())
    assert (decision.verdict, decision.policy.name, decision.policy.sha256) == (
        Verdict.APPROVE, "mini", loaded.sha256)


WAIVED = MINIMAL + """\
waivers:
  - repo: nvidia/model
    revision: {rev}
    finding: {{rule: "pickle-*", path: "*.bin"}}
    reason: reviewed by hand
    approver: alice
    expires: 2026-12-31
"""


def test_finding_waiver_suppresses_matching_findings(tmp_path: Path) -> None:
    # A medium finding: a waived critical one still stops approval (the floor, see test_floor.py).
    loaded = policy(tmp_path, WAIVED.format(rev=REV))
    found = [finding("pickle-unknown-global", "medium", "model.bin")]
    assert evaluate(loaded, facts(findings=found), today=date(2027, 1, 1)).verdict is Verdict.REVIEW
    evaluation = explain(loaded, facts(findings=found), today=TODAY)
    assert evaluation.decision.verdict is Verdict.APPROVE
    assert rules_of(evaluation.decision.reasons) == ["vendor-clean", "waiver"]
    assert "1 finding(s)" in evaluation.decision.reasons[1].message
    assert [f.rule for f in evaluation.waived] == ["pickle-unknown-global"]


def test_waiver_does_not_cover_other_paths_or_revisions(tmp_path: Path) -> None:
    loaded = policy(tmp_path, WAIVED.format(rev=REV))
    other_path = [finding("pickle-dangerous-global", "critical", "other.pt")]
    assert evaluate(loaded, facts(findings=other_path), today=TODAY).verdict is Verdict.REJECT
    same_finding = [finding("pickle-dangerous-global", "critical", "model.bin")]
    other_rev = facts(findings=same_finding, revision="b" * 40)
    assert evaluate(loaded, other_rev, today=TODAY).verdict is Verdict.REJECT


def test_expired_waiver_is_not_applied_and_is_reported(tmp_path: Path) -> None:
    loaded = policy(tmp_path, WAIVED.format(rev=REV))
    found = [finding("pickle-dangerous-global", "critical", "model.bin")]
    decision = evaluate(loaded, facts(findings=found), today=date(2027, 1, 1))
    assert decision.verdict is Verdict.REJECT
    assert rules_of(decision.reasons) == ["critical", "waiver-expired"]
    assert "expired 2026-12-31" in decision.reasons[1].message
    assert decision.reasons[1].decision is Verdict.APPROVE  # informational: never raises the verdict


def test_waiver_is_valid_through_its_expiry_day(tmp_path: Path) -> None:
    loaded = policy(tmp_path, WAIVED.format(rev=REV))
    found = [finding("pickle-unknown-global", "medium", "model.bin")]
    assert evaluate(loaded, facts(findings=found), today=date(2026, 12, 31)).verdict is Verdict.APPROVE


def test_any_revision_finding_waiver_never_drops_a_critical_finding(tmp_path: Path) -> None:
    # Fail-open guard: a `*` waiver would otherwise hide the critical findings of future commits.
    loaded = policy(tmp_path, WAIVED.format(rev="'*'"))
    found = [finding("pickle-dangerous-global", "critical", "model.bin"),
             finding("pickle-unknown-global", "medium", "model.bin")]
    evaluation = explain(loaded, facts(findings=found), today=TODAY)
    assert evaluation.decision.verdict is Verdict.REJECT
    assert rules_of(evaluation.decision.reasons) == ["critical", "waiver"]
    assert [f.rule for f in evaluation.waived] == ["pickle-unknown-global"]
    assert "1 critical kept" in evaluation.decision.reasons[1].message


def test_rule_waiver_switches_a_rule_off_for_any_revision(tmp_path: Path) -> None:
    text = MINIMAL + """\
waivers:
  - {repo: nvidia/model, revision: "*", rule: critical, reason: r, approver: bob, expires: 2030-01-01}
"""
    evaluation = explain(policy(tmp_path, text), facts(findings=[finding("x", "critical")]), today=TODAY)
    assert [r.status for r in evaluation.results] == ["waived", "not-fired"]
    # The floor still rejects the critical finding the switched-off rule was about.
    assert evaluation.decision.verdict is Verdict.REJECT
    assert rules_of(evaluation.decision.reasons) == ["default", "floor-critical", "waiver"]


@pytest.mark.parametrize(("when", "decision", "expected"), [
    ('repo.facts.author == "x"', "approve", Verdict.REVIEW),   # missing key at run time
    ("1 / (size(files) - 1) > 0", "review", Verdict.REVIEW),  # division by zero
    ("size(files)", "approve", Verdict.REVIEW),                # not a bool
    ('repo.facts.author == "x"', "reject", Verdict.REJECT),    # a failing reject rule stays reject
])
def test_cel_runtime_error_fails_closed(tmp_path: Path, when: str, decision: str, expected: Verdict) -> None:
    text = MINIMAL.replace('repo.tier == "vendor-official" && max_rank <= severity.low', when)
    text = text.replace("decision: approve", f"decision: {decision}")
    result = evaluate(policy(tmp_path, text), facts())
    assert result.verdict is expected
    assert rules_of(result.reasons) == ["vendor-clean"]
    assert "could not be evaluated (fail closed)" in result.reasons[0].message


def test_unsafe_policy_warns_and_marks_every_decision(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        loaded = load_policy(POLICIES / "unsafe-allow-all.yaml")
    assert "UNSAFE" in caplog.text
    decision = evaluate(loaded, facts(repo="evil/x", findings=[finding("download-and-execute", "critical")]))
    assert decision.verdict is Verdict.APPROVE
    assert rules_of(decision.reasons)[0] == "unsafe-policy"


def test_make_decide_plugs_into_the_pipeline(tmp_path: Path) -> None:
    snapshot = tmp_path / "snap"
    snapshot.mkdir()
    (snapshot / "README.md").write_text("hello\n")
    loaded = load_policy(POLICIES / "default.yaml")
    report = vet(LocalSource(snapshot, repo_id="nvidia/model", revision=REV), [], decide=make_decide(loaded))
    assert report.decision.policy.sha256 == loaded.sha256
    assert report.verdict is Verdict.REVIEW  # no scanner handled README.md: unscanned
    assert "incomplete-scan" in rules_of(report.decision.reasons)

    replayed = facts_from_report_dict(json.loads(json.dumps(report_json.dump(report))))
    assert evaluate(loaded, replayed) == report.decision


def test_lookalike_org_is_rejected_by_default_policy() -> None:
    loaded = load_policy(POLICIES / "default.yaml")
    evaluation = explain(loaded, facts(repo="nvidia-ai/model"))
    assert (evaluation.tier, evaluation.lookalike_of) == ("third-party", "nvidia")
    assert evaluation.decision.verdict is Verdict.REJECT


def test_no_policy_approves_a_revision_with_an_unvetted_file(tmp_path: Path) -> None:
    # MINIMAL has no rule about unscanned files; the engine's floor still refuses to approve.
    unvetted = [{"path": "model.safetensors", "format": "safetensors", "scanned": False}]
    decision = evaluate(policy(tmp_path), facts(files=unvetted))
    assert decision.verdict is Verdict.REVIEW
    assert "fail-closed" in [r.rule for r in decision.reasons]
    assert evaluate(policy(tmp_path), facts()).verdict is Verdict.APPROVE  # fully vetted: approved
