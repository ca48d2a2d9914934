"""The scanner registry's contract, checked once over all_scanners() rather than per scanner."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from app.core.findings import RuleInfo
from app.core.pipeline import NAME as PIPELINE
from app.core.pipeline import PIPELINE_RULES, vet
from app.core.scanners import all_scanners
from app.core.scanners.base import Scanner
from app.examples import build_examples
from app.sources.local import LocalSource
from tests.samples import benign, hostile

SCANNERS = all_scanners()


@pytest.mark.parametrize("scanner", SCANNERS, ids=lambda s: s.name)
def test_every_scanner_satisfies_the_protocol(scanner: Scanner) -> None:
    assert isinstance(scanner.name, str) and scanner.name
    assert scanner.rules and all(isinstance(r, RuleInfo) for r in scanner.rules)
    ids = [r.id for r in scanner.rules]
    assert len(ids) == len(set(ids)), f"{scanner.name} declares a rule twice"
    for method in ("handles", "scan", "version"):
        assert callable(getattr(scanner, method))
        assert list(inspect.signature(getattr(scanner, method)).parameters) == list(
            inspect.signature(getattr(Scanner, method)).parameters
        )[1:]
    assert isinstance(scanner.version(), str) and scanner.version()


def test_scanner_names_are_unique_and_not_the_pipeline() -> None:
    names = [s.name for s in SCANNERS]
    assert len(names) == len(set(names))
    assert PIPELINE not in names


def test_every_emitted_rule_is_declared_at_or_above_its_severity(tmp_path: Path) -> None:
    build_examples(tmp_path / "examples", hub_meta=False)
    for sample in (*hostile.SAMPLES, *benign.SAMPLES):
        sample.write(tmp_path / "samples" / sample.name)
    declared = {s.name: {r.id: r.severity for r in s.rules} for s in SCANNERS}
    declared[PIPELINE] = {r.id: r.severity for r in PIPELINE_RULES}
    report = vet(LocalSource(tmp_path), SCANNERS)
    assert len(report.findings) > 50  # the corpus really exercised the scanners
    emitted = {f.scanner for f in report.findings}
    assert len(emitted) >= 6
    for finding in report.findings:
        rules = declared[finding.scanner]
        assert finding.rule in rules, f"{finding.scanner} emitted undeclared {finding.rule}"
        assert finding.severity.rank <= rules[finding.rule].rank, finding
