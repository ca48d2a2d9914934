"""The fast CEL path answers only what celpy would answer, and the same way."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from app.core.policy import LoadedPolicy, PolicyFacts, evaluate, explain, load_policy
from app.core.policy.cases import discover, load_case, policy_path_for
from app.core.policy.cel import Activation, compile_cel, to_plain
from app.core.policy.fastcel import Unsure

from .helpers import POLICIES

VALUES: dict[str, Any] = {
    "s": "abc", "e": "", "n": None, "i": 3, "big": 2**62, "b": True, "f": 1.5,
    "l": ["a", "b"], "mixed": ["a", 1, None], "nums": [1, 2, 3], "m": {"k": 1, "s": "x", "none": None},
    "recs": [{"rule": "x", "rank": 1}, {"rule": "y", "rank": 3}], "dates": {"d": date(2026, 1, 2)},
}

# True expressions the fast path must answer itself (a regression to "always unsure" fails here).
ANSWERED = [
    "s == 'abc'", "s != \"abd\"", "n == null", "!(s == null)", "null != s", "i >= 3", "i < 4", "s < 'b'",
    "!(s in l)", "'a' in l", "!('z' in l)", "'a' in mixed", "2 in nums", "'k' in m", "!('z' in m)",
    "!(s in l) && b", "b || x_undeclared", "!(false && s)", "size(l) == 2", "l.size() == 2", "size(s) == 3",
    "has(m.k)", "has(m.none)", "!has(m.z)", "m.k == 1", "nums[1] == 2", "(l + ['c'])[2] == 'c'", "s + 'd' == 'abcd'",
    "i + 1 == 4", "i - 5 == -2", "i * 2 == 6", "-i == -3", "b ? i == 3 : false",
    "s.startsWith('ab')", "s.endsWith('c')", "s.contains('bc')", "e.contains('')",
    "recs.exists(r, r.rule == 'y' && r.rank > 2)", "recs.all(r, r.rank >= 1)", "!recs.all(r, r.rank > 1)",
    "nums.exists(x, x == 2)", "recs.exists(r, r.rule == 'x') || undeclared", "[].all(x, x)",
    "recs.exists(r, nums.exists(x, x == r.rank))", "dates.d == '2026-01-02'",
]
# Expressions with a type mix, an error or a quirk: only celpy may answer them.
UNSURE = [
    "i == null", "s == i", "b == 1", "'z' in mixed", "null in nums", "m.z == 1", "n.x == 1", "s || true",
    "big * 4 > 0", "9223372036854775807 + 1 > 0", "undeclared == 1", "nums.exists(x, x == 'a')",
    "f > 1", "(i == 3 ? s : 1) == 1", "nums[7] == 1", "s < 1", "m.exists(k, k == 'k')",
]
# CEL outside the subset: compiled for celpy alone.
UNSUPPORTED = ["i / 2 == 1", "i % 2 == 1", "f == 1.5", "{'a': 1}.a == 1", "s == '\\u0061'", "s == r'abc'",
               "s.matches('a.*')", "int(s) == 1", "nums.map(x, x * 2) == [2]", "type(s) == string",
               "s == \"\"\"abc\"\"\"", "3u == 3u", ".s == 'abc'"]


def _celpy(expr: str, activation: Activation) -> Any:
    try:
        return compile_cel(expr).runner.evaluate(activation.cel)
    except Exception as exc:  # noqa: BLE001 - an error is one of celpy's answers
        return exc


def _activation() -> Activation:
    return Activation(to_plain(VALUES))


@pytest.mark.parametrize("expr", ANSWERED)
def test_answered_like_celpy(expr: str) -> None:
    program = compile_cel(expr)
    assert program.fast is not None
    activation = _activation()
    fast = program.fast(activation.plain)
    assert type(fast) is bool
    assert fast == _celpy(expr, activation)
    assert fast is True  # every expression above is written to hold


@pytest.mark.parametrize("expr", UNSURE)
def test_unsure_left_to_celpy(expr: str) -> None:
    program = compile_cel(expr)
    assert program.fast is not None
    with pytest.raises(Unsure):
        program.fast(_activation().plain)


@pytest.mark.parametrize("expr", UNSUPPORTED)
def test_unsupported_compiles_for_celpy_only(expr: str) -> None:
    assert compile_cel(expr).fast is None


def _celpy_only(policy: LoadedPolicy) -> LoadedPolicy:
    return replace(policy, programs={k: replace(p, fast=None) for k, p in policy.programs.items()})


def _same(policy: LoadedPolicy, facts: PolicyFacts, today: date | None) -> None:
    fast, slow = explain(policy, facts, today=today), explain(_celpy_only(policy), facts, today=today)
    assert fast.decision == slow.decision
    assert [(r.rule.id, r.status, r.detail) for r in fast.results] == \
           [(r.rule.id, r.status, r.detail) for r in slow.results]


CASES = discover(POLICIES / "tests")


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_policy_cases_decide_as_celpy_alone(path: Any) -> None:
    case = load_case(path)
    _same(load_policy(policy_path_for(path, case)), case.input, case.today)


def test_every_shipped_rule_has_a_fast_path() -> None:
    for path in POLICIES.glob("*.yaml"):
        slow = [rule for rule, program in load_policy(path).programs.items() if program.fast is None]
        assert slow == [], f"{path.name}: rules evaluated by celpy alone: {slow}"


RULES = ["pickle-dangerous-global", "pickle-unknown-global", "pickle-dynamic-call", "malformed-archive",
         "malformed-safetensors", "limit-exceeded", "scan-error", "executable-binary", "forked-code", "auto-map",
         "remote-code", "format-polyglot", "unknown-code-install", "yara:x", "repo-reference"]
FORMATS = ["safetensors", "pickle", "pytorch-zip", "zip", "elf", "text", "gguf"]
SEVERITIES = ["info", "low", "medium", "high", "critical"]
REPOS = ["nvidia/m", "canada-quant/m", "nvldia/m", None, "Qwen/m"]


def _random_facts(rng: random.Random) -> PolicyFacts:
    paths = [f"f{i}.bin" for i in range(rng.randint(0, 5))]
    files = [{"path": p, "format": rng.choice(FORMATS), "scanned": rng.random() > 0.2} for p in paths]
    findings = [{"path": rng.choice([*paths, "config.json"]), "rule": rng.choice(RULES),
                 "severity": rng.choice(SEVERITIES), "source": rng.choice([None, "github.com/NVIDIA/x", "x.io/y"]),
                 "evidence": '{"repo": "other/base", "via": "adapter base model"}'}
                for _ in range(rng.randint(0, 6))]
    return PolicyFacts.model_validate({"repo": {"id": rng.choice(REPOS)}, "files": files, "findings": findings})


@pytest.mark.parametrize("name", ["default", "strict"])
def test_random_facts_decide_as_celpy_alone(name: str) -> None:
    policy, rng = load_policy(POLICIES / f"{name}.yaml"), random.Random(13)
    for _ in range(25):
        _same(policy, _random_facts(rng), None)


def test_evaluate_uses_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """No shipped rule falls back to celpy on ordinary facts (celpy costs ~1000x more)."""
    from app.core.policy import cel

    monkeypatch.setattr(cel, "_run_celpy", lambda *_: pytest.fail("celpy evaluated a rule"))
    rng = random.Random(7)
    for _ in range(10):
        evaluate(load_policy(POLICIES / "default.yaml"), _random_facts(rng))
