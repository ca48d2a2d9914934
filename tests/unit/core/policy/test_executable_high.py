"""Default policy (issue 11, item 10): a load that calls what no allowlist knows, or code nobody
fully read, blocks approval for every tier; third parties are rejected for it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from app.core.pipeline import VetOptions, vet
from app.core.policy import evaluate, load_policy, make_decide
from app.core.scanners import all_scanners
from app.core.verdict import Verdict
from app.sources.local import LocalSource
from tests.samples.text_shapes import SHAPES

from .helpers import POLICIES, REV, facts, finding, write

DEFAULT = POLICIES / "default.yaml"
BIN = [{"path": "pytorch_model.bin", "format": "pytorch-zip"}]


def test_executable_formats_are_the_floors_code_formats() -> None:
    # The policy no longer keeps a copy (issue 26): it reads the floor's group as `code_formats`.
    assert "lists" not in yaml.safe_load(DEFAULT.read_text())
    assert "x.format in code_formats" in DEFAULT.read_text()


def _with_trusted(tmp_path: Path) -> Path:
    text = DEFAULT.read_text()
    assert "  trusted: []\n" in text
    return write(tmp_path, text.replace("  trusted: []\n", "  trusted: [acme-labs]\n"), "default.yaml")


@pytest.mark.parametrize("rule", ["pickle-dynamic-call", "pickle-suspicious-call", "limit-exceeded"])
@pytest.mark.parametrize(("repo", "expected"), [
    ("nvidia/model", Verdict.REVIEW), ("acme-labs/model", Verdict.REVIEW), ("someone/model", Verdict.REJECT),
])
def test_high_findings_on_code_block_every_tier(tmp_path: Path, rule: str, repo: str, expected: Verdict) -> None:
    loaded = load_policy(_with_trusted(tmp_path))
    decision = evaluate(loaded, facts(repo=repo, files=BIN, findings=[finding(rule, "high", "pytorch_model.bin")]))
    assert decision.verdict is expected


def test_a_limit_on_safetensors_is_not_code() -> None:
    # safetensors runs nothing on load: a limit there is an incomplete scan (review), not a reject.
    decision = evaluate(load_policy(DEFAULT), facts(repo="someone/model",
                                                    findings=[finding("limit-exceeded", "high")]))
    assert decision.verdict is Verdict.REVIEW


def test_hard_benign_text_beside_vendor_weights_is_approved(tmp_path: Path) -> None:
    for name, text in SHAPES.items():
        (tmp_path / name).write_text(text)
    source = LocalSource(tmp_path, repo_id="nvidia/model", revision=REV)
    report = vet(source, list(all_scanners()), decide=make_decide(load_policy(DEFAULT)), options=VetOptions(workers=1))
    assert report.verdict is Verdict.APPROVE, report.decision.reasons
