"""Every benign corpus case (tests/corpus) under the default policy: never rejected at any tier;
a vendor-official repo is approved where the content is plainly data, and sent to review only
for the policy rule the case states."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.policy import LoadedPolicy
from app.core.verdict import Verdict
from tests.corpus.registry import Case, all_cases
from tests.corpus.verdicts import decisions_by_tier, default_policy

BENIGN = [case for case in all_cases() if case.kind == "benign"]


@pytest.fixture(scope="module")
def policy() -> LoadedPolicy:
    return default_policy()


@pytest.mark.parametrize("case", BENIGN, ids=[case.key for case in BENIGN])
def test_benign_case_is_never_rejected_and_reviewed_only_for_its_stated_reason(
    case: Case, policy: LoadedPolicy, tmp_path: Path
) -> None:
    decisions = decisions_by_tier(case.write(tmp_path / "repo"), policy)
    assert {tier: d.verdict for tier, d in decisions.items() if d.verdict is Verdict.REJECT} == {}
    vendor = decisions["vendor-official"]
    assert vendor.verdict.value == case.vendor, [r.message for r in vendor.reasons]
    if case.reason is not None:
        assert case.reason in {r.rule for r in vendor.reasons}
        assert case.reason in {r.rule for r in decisions["third-party"].reasons}


def test_the_hard_benign_corpus_has_the_shapes_issue_11_names() -> None:
    names = {case.name for case in BENIGN if case.family == "hard-benign"}
    for shape in ("trainer-training-args-zip", "sklearn-pipeline-joblib", "legacy-pytorch-model-bin-391-tensors",
                  "zip-checkpoint-with-optimizer", "text-requirements.txt", "text-labels.txt",
                  "gguf-with-chat-template", "safetensors-with-metadata", "npz-compressed-embeddings"):
        assert shape in names
