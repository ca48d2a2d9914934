"""The held-out loader corpus of issue 23 (tests/corpus/loader_heldout.py) under the default policy.

Hostile: a third-party repo is rejected, and the same bytes from a vendor-official org are not approved
(a vendor account can be compromised; what runs on load still needs a person). Benign: never rejected,
at any tier. The cases were written from the runtimes' source, not from hfvet's rules: a failure here
is a gap in the loader model, not a test to relax.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.policy import LoadedPolicy
from app.core.verdict import Verdict
from tests.corpus import loader_heldout as heldout
from tests.corpus.registry import Case, all_cases
from tests.corpus.verdicts import decisions_by_tier, default_policy

CASES = [c for c in all_cases() if c.family in (heldout.HOSTILE, heldout.BENIGN)]
HOSTILE = [c for c in CASES if c.kind == "hostile"]
BENIGN = [c for c in CASES if c.kind == "benign"]


@pytest.fixture(scope="module")
def policy() -> LoadedPolicy:
    return default_policy()


def _verdicts(case: Case, policy: LoadedPolicy, tmp_path: Path) -> dict[str, tuple[Verdict, list[str]]]:
    decisions = decisions_by_tier(case.write(tmp_path / case.name), policy)
    return {tier: (d.verdict, sorted({r.rule for r in d.reasons})) for tier, d in decisions.items()}


@pytest.mark.parametrize("case", HOSTILE, ids=[c.name for c in HOSTILE])
def test_hostile_loader_case_is_rejected_for_third_parties_and_not_approved_for_vendors(
    case: Case, policy: LoadedPolicy, tmp_path: Path
) -> None:
    verdicts = _verdicts(case, policy, tmp_path)
    assert verdicts["third-party"][0] is Verdict.REJECT, (case.why, verdicts)
    assert verdicts["vendor-official"][0] is not Verdict.APPROVE, (case.why, verdicts)


@pytest.mark.parametrize("case", BENIGN, ids=[c.name for c in BENIGN])
def test_benign_vendor_shape_is_never_rejected(case: Case, policy: LoadedPolicy, tmp_path: Path) -> None:
    verdicts = _verdicts(case, policy, tmp_path)
    assert {tier: v for tier, v in verdicts.items() if v[0] is Verdict.REJECT} == {}, case.why


def test_the_held_out_corpus_covers_the_three_classes() -> None:
    names = {c.name for c in HOSTILE}
    assert len(HOSTILE) >= 30 and len(BENIGN) >= 12
    for required in ("endpoints-handler-init-shell", "diffusers-custom-component", "st-modules-json-custom-module",
                     "transformers-custom-generate", "hubconf-import-time", "hydra-target-yaml",
                     "kernels-hub-kernel-init", "startup-sitecustomize", "startup-pth-import-line",
                     "vllm-general-plugin-entry-point", "vllm-tokenizer-flag-other-repo",
                     "sglang-draft-model-other-repo", "st-tokenizer-name-or-path", "card-snippet-other-repo-trust",
                     "diffusers-connected-prior-other-repo", "peft-adapter-base-with-code",
                     "remote-code-cffi-dlopen", "remote-code-numpy-ctypeslib", "remote-code-timeit-stmt",
                     "remote-code-interactive-interpreter", "remote-code-module-getattr-supplies-class",
                     "remote-code-config-to-dict-override"):
        assert required in names
    assert all(c.why for c in CASES)
