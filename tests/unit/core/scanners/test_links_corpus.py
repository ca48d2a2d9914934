"""The links corpus (links_corpus.py) through the links scanner and the default policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.pipeline import VetOptions, vet
from app.core.policy import load_policy
from app.core.policy.engine import make_decide
from app.core.scanners.links_scanner import LinksScanner
from app.sources.local import LocalSource
from tests.unit.core.policy.helpers import POLICIES, REV
from tests.unit.core.scanners.links_corpus import CASES, Expected

DEFAULT = load_policy(POLICIES / "default.yaml")


@pytest.mark.parametrize(("files", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_corpus_case(tmp_path: Path, files: dict[str, str], expected: Expected) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    source = LocalSource(tmp_path, repo_id=expected.repo, revision=REV)
    report = vet(source, [LinksScanner()], decide=make_decide(DEFAULT), options=VetOptions(workers=1))
    rules = {f.rule for f in report.findings}
    shown = sorted((f.rule, f.message[:90]) for f in report.findings if f.rule != "upstream-link")
    assert expected.rules <= rules, shown
    assert not expected.absent & rules, shown
    assert report.decision.verdict.value == expected.verdict, (report.decision.reasons, shown)
    assert expected.reasons <= {r.rule for r in report.decision.reasons}, report.decision.reasons
