"""The formats corpus (tests/corpus/formats.py) through every scanner: each hostile case raises its
rule and is never approved, even from a vendor-official org; the benign cases are judged with
every other benign case in tests/integration/test_hard_benign.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.core.findings import Finding
from app.core.manifest import Manifest
from app.core.pipeline import NAME as PIPELINE
from app.core.pipeline import PIPELINE_RULES, VetOptions, vet
from app.core.policy.engine import evaluate
from app.core.policy.facts import facts_from
from app.core.report import FileReport
from app.core.scanners import all_scanners
from app.core.verdict import Decision, Verdict
from app.sources.local import LocalSource
from tests.corpus.registry import Case, all_cases
from tests.corpus.verdicts import ORGS, default_policy

FAMILIES = {"onnx", "tflite", "raw-blobs"}
HOSTILE = [c for c in all_cases() if c.family in FAMILIES and c.kind == "hostile"]


def test_every_family_has_hostile_cases() -> None:
    assert {c.family for c in HOSTILE} == FAMILIES


@pytest.mark.parametrize("case", HOSTILE, ids=[c.key for c in HOSTILE])
def test_hostile_case_raises_its_rule_and_is_not_approved(case: Case, tmp_path: Path) -> None:
    policy = default_policy()
    decisions: dict[str, Decision] = {}
    rules: set[str] = set()

    def decide(manifest: Manifest, findings: list[Finding], files: list[FileReport]) -> Decision:
        rules.update(f.rule for f in findings)
        for tier, org in ORGS.items():
            named = replace(manifest, identity=replace(manifest.identity, repo_id=f"{org}/case"))
            decisions[tier] = evaluate(policy, facts_from(named, findings, files))
        return decisions["vendor-official"]

    vet(LocalSource(case.write(tmp_path / "repo")), all_scanners(), decide=decide, options=VetOptions(workers=1))
    assert case.rule in rules, sorted(rules)
    assert decisions["vendor-official"].verdict is not Verdict.APPROVE
    assert decisions["third-party"].verdict is Verdict.REJECT


def test_every_rule_the_corpus_raises_is_declared_at_or_above_its_severity(tmp_path: Path) -> None:
    scanners = all_scanners()
    declared = {s.name: {r.id: r.severity for r in s.rules} for s in scanners}
    declared[PIPELINE] = {r.id: r.severity for r in PIPELINE_RULES}
    cases = [c for c in all_cases() if c.family in FAMILIES or c.key.startswith("hard-benign/onnx")]
    for case in cases:
        case.write(tmp_path / case.kind / case.family / case.name)
    report = vet(LocalSource(tmp_path), scanners, options=VetOptions(workers=2))
    assert {"onnx", "tflite", "raw-data"} <= {f.scanner for f in report.findings}
    for finding in report.findings:
        assert finding.severity.rank <= declared[finding.scanner][finding.rule].rank, finding
