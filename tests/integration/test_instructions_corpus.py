"""Issue 24's instruction and manifest corpus (tests/corpus/instructions.py) under the default policy.

Hostile: a third-party repo is rejected, and the same bytes under a vendor-official org are not
approved; where a case names the rule that is its point, that rule fires. Benign: never rejected at
any tier, and a vendor-official repo gets the verdict the case states (approve when its only
sources are official upstreams, listed vendor sources, well-known PyPI packages and documented
installers). The cases were written from how the tools resolve sources, not from hfvet's rules: a
failure is a gap to close in hfvet, not an expectation to relax.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.policy import LoadedPolicy
from app.core.verdict import Verdict
from tests.corpus import instructions
from tests.corpus.registry import Case, all_cases
from tests.corpus.verdicts import default_policy, vet_by_tier

CASES = [c for c in all_cases() if c.family in (instructions.HOSTILE, instructions.BENIGN)]
HOSTILE = [c for c in CASES if c.kind == "hostile"]
BENIGN = [c for c in CASES if c.kind == "benign"]


@pytest.fixture(scope="module")
def policy() -> LoadedPolicy:
    return default_policy()


@pytest.mark.parametrize("case", HOSTILE, ids=[c.name for c in HOSTILE])
def test_hostile_instruction_is_rejected_for_third_parties_and_not_approved_for_vendors(
    case: Case, policy: LoadedPolicy, tmp_path: Path
) -> None:
    decisions, report = vet_by_tier(case.write(tmp_path / "repo"), policy)
    third, vendor = decisions["third-party"], decisions["vendor-official"]
    shown = sorted({(f.rule, f.path) for f in report.findings if f.severity > Severity.LOW})
    assert third.verdict is Verdict.REJECT, (case.why, [r.rule for r in third.reasons], shown)
    assert vendor.verdict is not Verdict.APPROVE, (case.why, shown)
    if case.rule is not None:
        fired = {f.rule for f in report.findings} | {r.rule for r in third.reasons}
        assert case.rule in fired, (case.why, sorted(fired))


@pytest.mark.parametrize("case", BENIGN, ids=[c.name for c in BENIGN])
def test_benign_vendor_instruction_is_never_rejected_and_gets_its_stated_verdict(
    case: Case, policy: LoadedPolicy, tmp_path: Path
) -> None:
    decisions, report = vet_by_tier(case.write(tmp_path / "repo"), policy)
    shown = sorted({(f.rule, f.path, f.message[:80]) for f in report.findings if f.severity > Severity.LOW})
    rejected = {tier: [r.rule for r in d.reasons] for tier, d in decisions.items() if d.verdict is Verdict.REJECT}
    assert rejected == {}, (case.why, shown)
    vendor = decisions["vendor-official"]
    assert vendor.verdict.value == case.vendor, (case.why, [r.rule for r in vendor.reasons], shown)
    if case.reason is not None:
        assert case.reason in {r.rule for r in vendor.reasons}


def test_the_corpus_covers_the_forms_issue_24_names() -> None:
    hostile, benign = {c.name for c in HOSTILE}, {c.name for c in BENIGN}
    assert len(hostile) >= 35 and len(benign) >= 35
    for name in ("curl-tee-bash", "curl-output-then-bash", "wget-stdout-redirect-chmod-run",
                 "env-bash-process-substitution", "env-i-sh-c-command-substitution", "variable-url-pipe-sh",
                 "braced-variable-exported", "python-c-runpy-urllib", "python-stdin-heredoc-exec",
                 "curl-pipe-python3-dash", "bash-s-from-process-substitution", "source-dev-stdin-here-string",
                 "extensionless-install-shebang", "extensionless-run-shebang", "extensionless-setup-env-sourced",
                 "makefile-recipe-pipe", "dockerfile-run-heredoc", "github-actions-run-block", "sbatch-srun-bash-c",
                 "uv-sources-git-unknown-owner", "uv-default-index-unknown", "pep723-script-git-dependency",
                 "dependency-confusion-unknown-extra-index", "dependency-confusion-vendor-extra-index",
                 "environment-yml-unknown-channel", "environment-yml-pip-git", "gitmodules-unknown-owner",
                 "helm-values-split-registry", "pyxis-registry-hash-image", "apptainer-docker-uri",
                 "pip-git-huggingface-repo", "pip-sdist-under-hub-resolve", "hf-download-then-pip-install",
                 "brand-new-package-name", "endpoints-requirements-brand-new-package"):
        assert name in hostile, name
    for name in ("nim-docker-run", "ngc-cli-install-and-model-download", "pyxis-ngc-container-sbatch",
                 "rocm-vllm-docker", "rocm-pytorch-index", "nvidia-pypi-requirements",
                 "conda-pytorch-nvidia-channels", "uv-project-pytorch-index", "nim-operator-helm",
                 "endpoints-requirements-well-known", "transformers-from-github", "uv-installer-one-liner",
                 "homebrew-installer", "miniconda-installer", "nix-installer", "rustup-installer",
                 "ollama-installer", "redhat-podman-registry", "intel-xpu-image-and-index", "google-registry-images",
                 "microsoft-registry-image", "pip-install-own-code", "makefile-pytest-only"):
        assert name in benign, name
    assert all(c.why for c in CASES)
