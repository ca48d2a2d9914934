"""Default policy on the joblib reading's findings: what hfvet could not vet blocks approval."""

from __future__ import annotations

import pytest

from app.core.policy import evaluate, load_policy
from app.core.verdict import Verdict

from .helpers import POLICIES, facts, finding

JOBLIB = [{"path": "model.joblib", "format": "pickle"}]
LZ4 = [{"path": "model.joblib", "format": "lz4"}]


@pytest.mark.parametrize(("rule", "files"), [
    ("joblib-array-unsized", JOBLIB),  # joblib.load reads on past what hfvet vetted
    ("joblib-side-file", JOBLIB),  # numpy opens a file outside the folder, pickles allowed
    ("container-unreadable", LZ4),  # an lz4 file joblib reads and hfvet cannot
])
@pytest.mark.parametrize(("repo", "expected"), [("nvidia/model", Verdict.REVIEW), ("someone/model", Verdict.REJECT)])
def test_unvetted_joblib_reading_blocks_every_tier(rule: str, files: list[dict[str, str]], repo: str,
                                                   expected: Verdict) -> None:
    policy = load_policy(POLICIES / "default.yaml")
    decision = evaluate(policy, facts(repo=repo, files=files, findings=[finding(rule, "high", "model.joblib")]))
    assert decision.verdict is expected


def test_a_side_file_beside_the_checkpoint_is_only_reviewed() -> None:
    policy = load_policy(POLICIES / "default.yaml")
    decision = evaluate(policy, facts(repo="someone/model", files=JOBLIB,
                                      findings=[finding("joblib-side-file", "medium", "model.joblib")]))
    assert decision.verdict is Verdict.REVIEW
