"""CEL is parsed once per expression, a changed policy compiles what changed, threads share it safely."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from app.core.policy import cel, evaluate, load_policy, policy_from_data
from app.core.policy.yamlmarks import load_yaml

from .helpers import POLICIES, REPO_ROOT, facts, finding


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """Every expression parsed from now on, with empty compile caches (this process's and on disk)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    seen: list[str] = []
    real = cel._parse

    def counting(env: Any, expr: str) -> Any:
        seen.append(expr)
        return real(env, expr)

    cel.compile_cel.cache_clear()
    monkeypatch.setattr(cel, "_parse", counting)
    yield seen
    cel.compile_cel.cache_clear()


def test_each_expression_is_parsed_once(parses: list[str]) -> None:
    first = load_policy(POLICIES / "default.yaml")
    whens = {rule.when for rule in first.model.rules}
    assert sorted(parses) == sorted(whens)
    again = load_policy(POLICIES / "default.yaml")
    for _ in range(3):
        evaluate(again, facts(findings=[finding("pickle-unknown-global", "medium")]))
    assert sorted(parses) == sorted(whens)  # the second load and the decisions parsed nothing
    assert again.programs["critical-finding"] is first.programs["critical-finding"]


def test_a_changed_policy_compiles_its_changed_rule(parses: list[str]) -> None:
    document = load_yaml(POLICIES / "default.yaml")
    before = policy_from_data(document, "default.yaml")
    parsed = len(parses)
    rule = next(r for r in document["rules"] if r["id"] == "unknown-pickle-global")
    rule["when"] = '"pickle-unknown-global" in finding_rules && repo.tier == "third-party"'
    after = policy_from_data(document, "default-changed.yaml")
    assert after.sha256 != before.sha256
    assert parses[parsed:] == [rule["when"]]
    assert after.programs["unknown-pickle-global"].source == rule["when"]
    vendor = facts("nvidia/model", findings=[finding("pickle-unknown-global", "medium")])
    reasons = {r.rule for r in evaluate(before, vendor).reasons}
    assert "unknown-pickle-global" in reasons
    assert "unknown-pickle-global" not in {r.rule for r in evaluate(after, vendor).reasons}


def test_concurrent_first_compiles_keep_each_program_its_own() -> None:
    """celpy's Environment keeps the last runner on itself: compiles are serialised."""
    cel.compile_cel.cache_clear()
    exprs = [f"size(findings) == {i}" for i in range(40)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        programs = list(pool.map(cel.compile_cel, exprs))
    activation = cel.Activation({"findings": [1, 2, 3]})
    for i, program in enumerate(programs):
        assert program.source == exprs[i]
        assert cel._run_celpy(program, activation) is (i == 3)


def test_decisions_from_threads_match_sequential_ones() -> None:
    policy = load_policy(POLICIES / "default.yaml")
    cases = [facts(repo, findings=[finding(rule, severity)])
             for repo in ("nvidia/m", "canada-quant/m", "nvldia/m")
             for rule, severity in (("pickle-unknown-global", "medium"), ("executable-binary", "high"),
                                    ("pickle-dangerous-global", "critical"), ("note", "info"))]
    expected = [evaluate(policy, f) for f in cases]
    assert len({d.verdict for d in expected}) == 3  # the cases cover every verdict
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(5):
            assert list(pool.map(lambda f: evaluate(policy, f), cases)) == expected


def test_importing_the_policy_package_loads_no_cel() -> None:
    code = ("import sys, app.core.policy, app.core.policy.cel; "
            "print(sorted(m for m in ('celpy', 'lark') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=REPO_ROOT).stdout
    assert out.strip() == "[]"
