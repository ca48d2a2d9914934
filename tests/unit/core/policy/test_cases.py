"""The policy fixture cases in policies/tests/ (each row of the default policy's table is one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.policy import PolicyError
from app.core.policy.cases import discover, load_case, run_case

from .helpers import POLICIES

CASES = discover(POLICIES / "tests")


def test_every_policy_has_cases() -> None:
    policies = {p.stem for p in POLICIES.glob("*.yaml")}
    assert policies <= {p.parent.name for p in CASES}
    # Other folders (tests/floor/) hold cases that name their own fixture policy.
    others = [p for p in CASES if p.parent.name not in policies]
    assert others and all(load_case(p).policy for p in others)
    assert len([p for p in CASES if p.parent.name == "default"]) >= 10


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_policy_case(path: Path) -> None:
    result = run_case(path)
    assert result.passed, f"expected {result.expected}, got {result.got}"


def _copy_case(tmp_path: Path, source: str, edit: tuple[str, str]) -> Path:
    folder = tmp_path / "tests" / "default"
    folder.mkdir(parents=True)
    (tmp_path / "default.yaml").write_text((POLICIES / "default.yaml").read_text())
    text = (POLICIES / "tests" / "default" / source).read_text()
    assert edit[0] in text
    case = folder / source
    case.write_text(text.replace(*edit))
    return case


def test_a_wrong_expectation_fails(tmp_path: Path) -> None:
    case = _copy_case(tmp_path, "07a-third-party-clean.yaml", ("verdict: review", "verdict: approve"))
    result = run_case(case)
    assert not result.passed
    assert (result.expected, result.got) == ("approve [third-party]", "review [third-party]")


def test_a_case_with_an_unknown_key_is_an_error_with_its_line(tmp_path: Path) -> None:
    case = _copy_case(tmp_path, "07a-third-party-clean.yaml", ("expect:", "expectt:"))
    with pytest.raises(PolicyError) as info:
        load_case(case)
    assert any(i.message == "expectt: unknown key 'expectt'" and i.line for i in info.value.issues)
    assert not run_case(case).passed
