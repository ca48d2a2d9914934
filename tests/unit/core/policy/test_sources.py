"""The policy's `sources`: vendor-owned forks, indexes and registries as data."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from app.core import report_json
from app.core.findings import Finding, Severity
from app.core.policy import PolicyError, evaluate, load_policy
from app.core.policy.sources import source_owner
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
