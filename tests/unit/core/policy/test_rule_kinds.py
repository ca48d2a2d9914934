"""Rule kinds (issue 26): each rule declares what it means to a policy, and policies classify by it.

The shipped policies kept hand lists of rule ids (`incomplete_scan`, `dangerous_capability`...); a new
rule silently did not count until someone added it to every list. Now every rule declares a kind where
it is defined, the policy sees it as `f.kind`, and these tests fail when a rule has none or the
generated table (app/core/policy/rule_kinds.json) is stale.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from app.cli.checks import declared_rules, render_rule_kinds
from app.core.findings import KIND_MEANINGS, RuleInfo, RuleKind, Severity
from app.core.policy import evaluate
from app.core.policy.activation import build_activation
from app.core.policy.facts import FindingFact, PolicyFacts
from app.core.policy.floor import CODE_FORMATS
from app.core.policy.kinds import DATA_FILE, UNKNOWN_KIND, kind_of
from app.core.verdict import Verdict

from .helpers import POLICIES, facts, policy

RULES = list(declared_rules())


@pytest.mark.parametrize(("reporter", "rule"), RULES, ids=[f"{n}:{r.id}" for n, r in RULES])
def test_every_rule_declares_a_kind(reporter: str, rule: RuleInfo) -> None:
    assert isinstance(rule.kind, RuleKind), f"{reporter} declares {rule.id} without a kind"


def test_a_rule_id_has_one_kind_wherever_it_is_declared() -> None:
    kinds: dict[str, set[RuleKind]] = {}
    for _, rule in RULES:
        kinds.setdefault(rule.id, set()).add(rule.kind)
    assert {rule: found for rule, found in kinds.items() if len(found) > 1} == {}


def test_the_generated_table_is_the_declarations() -> None:
    assert DATA_FILE.read_text(encoding="utf-8").strip() == render_rule_kinds(), (
        "run `hfvet checks --kinds > app/core/policy/rule_kinds.json`")


def test_every_kind_is_explained_and_used() -> None:
    assert set(KIND_MEANINGS) == set(RuleKind)
    assert {rule.kind for _, rule in RULES} == set(RuleKind)


def test_the_incomplete_helpers_declare_scan_error_and_limit() -> None:
    assert RuleInfo.scan_error("x").kind is RuleInfo.limit("x").kind is RuleKind.INCOMPLETE
    assert (RuleInfo.scan_error("x").id, RuleInfo.limit("x").id) == ("scan-error", "limit-exceeded")


def test_findings_carry_their_kind_and_unknown_rules_are_unknown() -> None:
    found = [FindingFact(path="a", rule=rule, severity=Severity.HIGH) for rule in ("limit-exceeded", "never-declared")]
    plain = build_activation(PolicyFacts(findings=found), found, [], ("third-party", None), {}).plain
    assert [f["kind"] for f in plain["findings"]] == ["incomplete", UNKNOWN_KIND]
    assert kind_of("never-declared") == UNKNOWN_KIND
    assert set(plain["code_formats"]) == {str(f) for f in CODE_FORMATS}
    assert {"safetensors", "gguf", "pickle"} <= set(plain["weights_formats"])


def test_the_shipped_policies_keep_no_rule_id_lists() -> None:
    declared = {rule.id for _, rule in RULES}
    for path in sorted(POLICIES.glob("*.yaml")):
        lists = yaml.safe_load(path.read_text(encoding="utf-8")).get("lists") or {}
        copied = {name: sorted(set(ids) & declared) for name, ids in lists.items() if set(ids) & declared}
        assert copied == {}, f"{path.name} keeps rule ids by hand: classify by `f.kind` instead"


def test_a_new_rule_of_a_kind_counts_without_touching_the_policy(tmp_path: Path) -> None:
    """A policy written against kinds catches any rule of that kind, as lists caught only the ids they named."""
    text = """\
    name: kinds
    description: kinds
    tiers:
      vendor-official: [nvidia]
    rules:
      - id: not-fully-vetted
        description: a file was not fully vetted
        when: findings.exists(f, f.kind == "incomplete")
        decision: reject
    default: review
    """
    loaded = policy(tmp_path, text)
    for rule in sorted(r.id for _, r in RULES if r.kind is RuleKind.INCOMPLETE):
        assert evaluate(loaded, facts(findings=[{"path": "a", "rule": rule, "severity": "low"}])).verdict is (
            Verdict.REJECT), rule


def test_id_lists_still_work(tmp_path: Path) -> None:
    """Backward compatible: a user policy with its own `lists` of rule ids decides as before."""
    text = """\
    name: lists
    description: lists
    tiers:
      vendor-official: [nvidia]
    lists:
      mine: [limit-exceeded]
    rules:
      - id: listed
        description: a listed rule
        when: findings.exists(f, f.rule in lists.mine)
        decision: reject
    default: review
    """
    loaded = policy(tmp_path, text)
    assert evaluate(loaded, facts(findings=[{"path": "a", "rule": "limit-exceeded", "severity": "low"}])).verdict is (
        Verdict.REJECT)
    assert evaluate(loaded, facts(findings=[{"path": "a", "rule": "scan-error", "severity": "low"}])).verdict is (
        Verdict.REVIEW)


def test_the_generated_table_is_json_of_kind_names() -> None:
    table = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    assert set(table.values()) <= {str(k) for k in RuleKind}
