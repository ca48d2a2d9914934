"""The remote-code / encoded-binary corpus (tests/samples/remote_corpus.py) under the default policy.

Every scanner runs, as in a real vet, so a case also shows what the rest of hfvet says about it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.pipeline import VetOptions, vet
from app.core.policy import load_policy
from app.core.policy.engine import make_decide
from app.core.report import Report
from app.core.scanners import all_scanners
from app.sources.local import LocalSource
from tests.samples.remote_corpus import CASES, Case

POLICY = Path(__file__).parents[4] / "policies" / "default.yaml"


def _vet(tmp_path: Path, case: Case) -> Report:
    for name, content in case.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    decide = make_decide(load_policy(POLICY))
    return vet(LocalSource(tmp_path, repo_id=case.repo), all_scanners(), decide=decide, options=VetOptions(workers=1))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_case(tmp_path: Path, case: Case) -> None:
    report = _vet(tmp_path, case)
    found = {f.rule for f in report.findings}
    summary = sorted((f.rule, f.severity.value, f.message[:90]) for f in report.findings)
    assert report.decision.verdict.value == case.expected.verdict, (case.why, summary)
    for rule, lowest in case.expected.rules.items():
        severities = [f.severity for f in report.findings if f.rule == rule]
        assert severities, (f"{rule} missing", case.why, summary)
        assert max(s.rank for s in severities) >= Severity(lowest).rank, (rule, case.why, summary)
    assert not found & set(case.expected.absent), (case.why, summary)
    if case.expected.message:
        assert any(case.expected.message in f.message for f in report.findings), (case.why, summary)
