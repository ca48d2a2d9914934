"""The policy's `sources`: vendor-owned forks, indexes and registries as data."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from app.core import report_json
from app.core.findings import Finding, Severity
from app.core.policy import PolicyError, evaluate, load_policy
from app.core.policy.floor import FLOOR_CRITICAL
from app.core.policy.sources import installer_of, source_owner
from app.core.verdict import Verdict

from .helpers import MINIMAL, POLICIES, facts, policy

NVIDIA = {"nvidia": ["github.com/NVIDIA/*", "nvcr.io/nim/*", "pypi.nvidia.com"]}

WITH_SOURCES = MINIMAL.replace("rules:\n", """sources:
  nvidia: [github.com/NVIDIA/*, nvcr.io/nim/*]
rules:
  - id: foreign-install
    description: an install from a source no vendor owns
    when: findings.exists(f, f.rule == "forked-code" && !f.vendor_source)
    decision: reject
""")


@pytest.mark.parametrize(("source", "owner"), [
    ("github.com/NVIDIA/vllm", "nvidia"),
    ("github.com/nvidia/vllm", "nvidia"),  # GitHub owners are case-insensitive
    ("nvcr.io/nim/meta/llama-3.1-8b-instruct", "nvidia"),
    ("pypi.nvidia.com", "nvidia"),
    ("pypi.nvidia.com/simple/tensorrt-llm", "nvidia"),  # a host pattern covers its paths
    ("github.com/NVIDIA-evil/vllm", None),  # not the owner, only its prefix
    ("pypi.nvidia.com.evil.example/simple", None),
    ("nvcr.io/someone/vllm", None),
    ("github.com/someone/NVIDIA", None),
    (None, None),
])
def test_source_owner(source: str | None, owner: str | None) -> None:
    assert source_owner(source, NVIDIA) == owner


def test_vendor_source_is_visible_to_rules(tmp_path: Path) -> None:
    loaded = policy(tmp_path, WITH_SOURCES)
    fork = {"path": "README.md", "rule": "forked-code", "severity": "high"}
    own = facts("canada-quant/x", [fork | {"source": "github.com/NVIDIA/vllm"}])
    foreign = facts("canada-quant/x", [fork | {"source": "github.com/someone/vllm"}])
    unknown = facts("canada-quant/x", [fork])  # no source named: judged as foreign
    assert evaluate(loaded, own).verdict is Verdict.REVIEW
    assert evaluate(loaded, foreign).verdict is Verdict.REJECT
    assert evaluate(loaded, unknown).verdict is Verdict.REJECT


@pytest.mark.parametrize(("entry", "message"), [
    ("  nvidia: ['https://github.com/NVIDIA/*']\n", "sources.nvidia.0"),  # no scheme: host/path only
    ("  nvidia: []\n", "list at least one"),
    ("  nvidia: [github.com/NVIDIA/vllm/../*]\n", "not path segments"),
    ("  nvidia: [nvcr.io/nim/*, 'nvcr.io /x']\n", "sources.nvidia.1"),
    ("  nvidia: [github.com/NVIDIA/*, github.com/nvidia/*]\n", "listed twice"),
])
def test_bad_sources_are_load_errors(tmp_path: Path, entry: str, message: str) -> None:
    text = MINIMAL.replace("rules:\n", f"sources:\n{entry}rules:\n")
    with pytest.raises(PolicyError, match=message):
        policy(tmp_path, text)


def test_a_policy_without_sources_keeps_its_hash(tmp_path: Path) -> None:
    plain = policy(tmp_path, MINIMAL)
    empty = policy(tmp_path, MINIMAL.replace("rules:\n", "sources: {}\nrules:\n"))
    listed = policy(tmp_path, MINIMAL.replace("rules:\n", "sources:\n  nvidia: [nvcr.io/nim/*]\nrules:\n"))
    assert plain.sha256 == empty.sha256 != listed.sha256


def test_default_policy_lists_nvidia_registries_and_forks() -> None:
    sources = load_policy(POLICIES / "default.yaml").model.sources
    for source in ("github.com/NVIDIA/vllm", "nvcr.io/nim/meta/llama-3.1-8b-instruct", "pypi.nvidia.com"):
        assert source_owner(source, sources) == "nvidia", source


def test_source_survives_the_report_json_round_trip() -> None:
    finding = Finding("README.md", "links", "forked-code", Severity.HIGH, "fork", source="github.com/NVIDIA/vllm")
    plain = dataclasses.replace(finding, source=None)
    assert report_json.dump_finding(finding)["source"] == "github.com/NVIDIA/vllm"
    assert "source" not in report_json.dump_finding(plain)  # optional key: older readers see no change
    doc = json.loads(json.dumps(report_json.dump_finding(finding)))
    assert report_json._FindingDoc.model_validate(doc).source == "github.com/NVIDIA/vllm"


UV = {"uv": ["astral.sh/uv/*"], "homebrew": ["raw.githubusercontent.com/Homebrew/install/HEAD/install.sh"],
      "rustup": ["sh.rustup.rs"]}


@pytest.mark.parametrize(("rule", "source", "tool"), [
    ("download-and-execute", "astral.sh/uv/install.sh", "uv"),
    ("download-and-execute", "astral.sh/uv/0.5.0/install.sh", "uv"),
    ("download-and-execute", "sh.rustup.rs", "rustup"),
    ("download-and-execute", "raw.githubusercontent.com/Homebrew/install/HEAD/install.sh", "homebrew"),
    # A commit of the repo may be a fork's (GitHub serves fork commits under the parent's name): not HEAD.
    ("download-and-execute", "raw.githubusercontent.com/Homebrew/install/0123abc/install.sh", None),
    ("download-and-execute", "astral.sh.example.invalid/uv/install.sh", None),
    ("download-and-execute", None, None),
    ("forked-code", "astral.sh/uv/install.sh", None),  # only a download-and-execute is vouched for
])
def test_installer_of(rule: str, source: str | None, tool: str | None) -> None:
    assert installer_of(rule, source, UV) == tool


LAX_WITH_UV = """\
name: lax
description: approves every third party, lists uv's installer
tiers:
  vendor-official: [nvidia]
installers:
  uv: [astral.sh/uv/*]
rules:
  - id: approve-all-third-party
    description: a careless rule
    when: repo.tier == "third-party"
    decision: approve
"""


def test_the_floor_leaves_a_listed_installer_to_the_policy(tmp_path: Path) -> None:
    loaded = policy(tmp_path, LAX_WITH_UV)
    run = {"path": "README.md", "rule": "download-and-execute", "severity": "critical",
           "source": "astral.sh/uv/install.sh"}
    other = run | {"source": "example.invalid/install.sh"}
    listed = evaluate(loaded, facts("canada-quant/x", [run]))
    unlisted = evaluate(loaded, facts("canada-quant/x", [other]))
    assert listed.verdict is Verdict.APPROVE and FLOOR_CRITICAL not in {r.rule for r in listed.reasons}
    assert unlisted.verdict is Verdict.REJECT and FLOOR_CRITICAL in {r.rule for r in unlisted.reasons}


@pytest.mark.parametrize(("entry", "message"), [
    ("  uv: ['github.com/*']\n", "must name the owner"),
    ("  uv: [github.com]\n", "must name the owner"),
    ("  uv: ['raw.githubusercontent.com/*/install/HEAD/install.sh']\n", "must name the owner"),
    ("  uv: ['*.astral.sh/uv/*']\n", "installers.uv.0"),
    ("  Not_A_Slug: [astral.sh/uv/*]\n", "installers"),
    ("  uv: []\n", "list at least one"),
])
def test_bad_installers_are_load_errors(tmp_path: Path, entry: str, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        policy(tmp_path, MINIMAL.replace("rules:\n", f"installers:\n{entry}rules:\n"))


def test_optional_vendor_sections_keep_a_policys_hash_while_empty(tmp_path: Path) -> None:
    plain = policy(tmp_path, MINIMAL)
    empty = policy(tmp_path, MINIMAL.replace("rules:\n", "identities: {}\ninstallers: {}\nrules:\n"))
    listed = policy(tmp_path, MINIMAL.replace("rules:\n", "installers:\n  uv: [astral.sh/uv/*]\nrules:\n"))
    assert plain.sha256 == empty.sha256 != listed.sha256


@pytest.mark.parametrize(("source", "vendor"), [
    ("registry.redhat.io/rhaiis/vllm-cuda-rhel9", "redhat"),
    ("registry.access.redhat.com/ubi9/python-311", "redhat"),
    ("quay.io/modh/vllm", "redhat"),
    ("github.com/neuralmagic/llm-compressor", "redhat"),
    ("github.com/red-hat-data-services/vllm", "redhat"),
    ("github.com/opendatahub-io/vllm", "redhat"),
    ("docker.io/rocm/vllm", "amd"),
    ("repo.radeon.com/rocm/manylinux/rocm-rel-6.4", "amd"),
    ("github.com/intel/ipex-llm", "intel"),
    ("us-docker.pkg.dev/vertex-ai/vertex-vision-model-garden-dockers/pytorch-vllm-serve", "google"),
    ("mcr.microsoft.com/azureml/curated/vllm", "microsoft"),
    ("quay.io/someone/vllm", None),
    ("docker.io/rocm-official/vllm", None),
])
def test_default_policy_lists_vendor_registries(source: str, vendor: str | None) -> None:
    sources = load_policy(POLICIES / "default.yaml").model.sources
    assert source_owner(source, sources) == vendor
