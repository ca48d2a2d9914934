"""Policy fixture cases (`policies/tests/<policy>/*.yaml`): input facts -> expected verdict and reasons.

Like `opa test`: each case names what must come out, so a policy change that alters a verdict
fails review until the case is updated too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.core.policy.engine import evaluate
from app.core.policy.errors import PolicyError
from app.core.policy.facts import PolicyFacts
from app.core.policy.loader import LoadedPolicy, load_policy
from app.core.policy.schema import DecisionName
from app.core.policy.yamlmarks import load_yaml, validation_issues


class Expectation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    verdict: DecisionName = Field(description="The verdict the policy must give.")
    rules: list[str] = Field(description="Exactly the reason ids it must record (order ignored).")


class PolicyCase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    description: str = Field(min_length=1, description="What the case stands for.")
    policy: str | None = Field(
        None, description="Policy file relative to the case; default `policies/<folder name>.yaml`."
    )
    today: date | None = Field(None, description="Date used for waiver expiry (default: today).")
    input: PolicyFacts = Field(description="`repo`, `files`, `findings`, as in a report.")
    expect: Expectation = Field(description="What must come out.")


@dataclass(frozen=True)
class CaseResult:
    path: Path
    passed: bool
    expected: str
    got: str


def discover(target: Path) -> list[Path]:
    return [target] if target.is_file() else sorted(target.rglob("*.yaml"))


def run_cases(target: Path) -> list[CaseResult]:
    cache: dict[Path, LoadedPolicy] = {}
    return [run_case(path, cache) for path in discover(target)]


def run_case(path: Path, cache: dict[Path, LoadedPolicy] | None = None) -> CaseResult:
    cache = {} if cache is None else cache
    try:
        case = load_case(path)
        policy_path = policy_path_for(path, case)
        if policy_path not in cache:
            cache[policy_path] = load_policy(policy_path)
        decision = evaluate(cache[policy_path], case.input, today=case.today)
    except PolicyError as exc:
        return CaseResult(path, False, "a valid case and policy", f"error: {exc}")
    got_rules = sorted({r.rule for r in decision.reasons})
    expected = _show(case.expect.verdict, sorted(set(case.expect.rules)))
    got = _show(decision.verdict.value, got_rules)
    return CaseResult(path, expected == got, expected, got)


def load_case(path: Path) -> PolicyCase:
    document = load_yaml(path)
    if not isinstance(document, dict):
        raise PolicyError.single(str(path), 1, "a policy test case is a YAML mapping")
    try:
        return PolicyCase.model_validate(document)
    except ValidationError as exc:
        raise PolicyError(validation_issues(exc, str(path), document)) from exc


def policy_path_for(case_path: Path, case: PolicyCase) -> Path:
    if case.policy:
        return (case_path.parent / case.policy).resolve()
    return (case_path.parent.parent.parent / f"{case_path.parent.name}.yaml").resolve()


def _show(verdict: str, rules: list[str]) -> str:
    return f"{verdict} [{', '.join(rules)}]"
