"""The repo-level corpus families of issue 12 items 3-6, through every scanner hfvet runs:
each hostile case raises its rule, each benign case stays at info."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.pipeline import VetOptions, vet
from app.core.scanners import all_scanners
from app.sources.local import LocalSource
from tests.corpus.registry import Case, all_cases

FAMILIES = {"chat-template-folding", "chat-template-containers", "metadata-text", "repo-references",
            "keras-load-time", "remote-code-sinks"}
CASES = [c for c in all_cases() if c.family in FAMILIES]


def test_every_family_has_cases() -> None:
    assert {c.family for c in CASES} == FAMILIES


@pytest.mark.parametrize("case", CASES, ids=[c.key for c in CASES])
def test_case_through_all_scanners(case: Case, tmp_path: Path) -> None:
    report = vet(LocalSource(case.write(tmp_path / "repo")), all_scanners(), options=VetOptions(workers=1))
    rules = {f.rule for f in report.findings}
    if case.kind == "hostile":
        assert case.rule in rules, sorted(rules)
    else:
        assert {f.severity for f in report.findings} <= {Severity.INFO}, sorted(rules)
