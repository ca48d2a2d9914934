"""The example repos served by the demo, the tests and the fixture hub."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from app.core.findings import Severity
from app.core.verdict import Verdict
from app.examples.files import HUB_META
from app.examples.repos_third_party import build_canada_quant, build_quantfarm_pickle
from app.examples.repos_vendor import build_nemotron_custom_code, build_nvidia_nvfp4, build_nvldia_lookalike
from app.examples.spec import ExampleRepo

NVIDIA = ExampleRepo(
    "nvidia/DeepSeek-V4-Flash-NVFP4",
    "vendor NVFP4 quant: safetensors, config, tokenizer, card linking only to official code",
    Verdict.APPROVE,
    max_severity=Severity.MEDIUM,
)
CANADA = ExampleRepo(
    "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP",
    "third-party quant: remote code loading a bundled .so, forked vllm/sglang, prebuilt binaries",
    Verdict.REJECT,
    expected_rules=("executable-binary", "forked-code", "binary-download"),
    expected_rules_any=(("remote-code", "remote-code-dangerous"), ("auto-map", "remote-code")),
)
QUANTFARM = ExampleRepo(
    "quantfarm/Llama-3.1-8B-Instruct-pt",
    "third-party PyTorch checkpoint whose data.pkl calls posix.system",
    Verdict.REJECT,
    expected_rules=("pickle-dangerous-global",),
)
NVLDIA = ExampleRepo(
    "nvldia/DeepSeek-V4-Flash-NVFP4",
    "lookalike of nvidia (l for i) serving a copy of the vendor repo",
    Verdict.REJECT,
    max_severity=Severity.MEDIUM,
    policy_note="org name is a lookalike of the vendor-official org 'nvidia'",
)
NEMOTRON = ExampleRepo(
    "nvidia/Nemotron-Mini-Custom-Code",
    "vendor repo whose config auto_map needs trust_remote_code (plain modeling code)",
    Verdict.REVIEW,
    expected_rules_any=(("remote-code", "auto-map"),),
    max_severity=Severity.MEDIUM,
    policy_note="remote code needs a human review even from a vendor",
)

EXAMPLES: tuple[ExampleRepo, ...] = (NVIDIA, CANADA, QUANTFARM, NVLDIA, NEMOTRON)

_BUILDERS: dict[str, Callable[[Path], None]] = {
    NVIDIA.repo_id: build_nvidia_nvfp4,
    CANADA.repo_id: build_canada_quant,
    QUANTFARM.repo_id: build_quantfarm_pickle,
    NVLDIA.repo_id: build_nvldia_lookalike,
    NEMOTRON.repo_id: build_nemotron_custom_code,
}


def example(repo_id: str) -> ExampleRepo:
    for ex in EXAMPLES:
        if ex.repo_id == repo_id:
            return ex
    known = ", ".join(ex.repo_id for ex in EXAMPLES)
    raise KeyError(f"no example repo {repo_id!r} (known: {known})")


def build_example(root: Path, repo_id: str, *, hub_meta: bool = True) -> ExampleRepo:
    """Write one example repo to root/<org>/<name>/, replacing what was there.

    `hub_meta=False` leaves out `.hub.json`: the directory then holds only repo content, as a
    downloaded snapshot would (use that for `hfvet scan` / LocalSource).
    """
    ex = example(repo_id)
    target = ex.path(root)
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    _BUILDERS[repo_id](target)
    if not hub_meta:
        (target / HUB_META).unlink()
    return ex


def build_examples(root: Path, *, hub_meta: bool = True) -> list[ExampleRepo]:
    """Write every example repo under `root` in the fixture-hub layout."""
    return [build_example(root, ex.repo_id, hub_meta=hub_meta) for ex in EXAMPLES]
