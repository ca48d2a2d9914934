"""Small builders shared by the policy tests."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from app.core.policy import LoadedPolicy, PolicyFacts, load_policy

REPO_ROOT = Path(__file__).resolve().parents[4]
POLICIES = REPO_ROOT / "policies"
REV = "a" * 40

MINIMAL = """\
name: mini
description: test policy
tiers:
  vendor-official: [nvidia]
rules:
  - id: critical
    description: a critical finding
    when: findings.exists(f, f.severity == "critical")
    decision: reject
  - id: vendor-clean
    description: vendor with nothing above low
    when: repo.tier == "vendor-official" && max_rank <= severity.low
    decision: approve
default: review
"""


def write(tmp_path: Path, text: str, name: str = "policy.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def policy(tmp_path: Path, text: str = MINIMAL) -> LoadedPolicy:
    return load_policy(write(tmp_path, text))


def facts(repo: str | None = "nvidia/model", findings: list[dict[str, Any]] | None = None,
          files: list[dict[str, Any]] | None = None, revision: str | None = REV) -> PolicyFacts:
    return PolicyFacts.model_validate({
        "repo": {"id": repo, "revision": revision},
        "files": files if files is not None else [{"path": "model.safetensors", "format": "safetensors"}],
        "findings": findings or [],
    })


def finding(rule: str, severity: str, path: str = "model.safetensors") -> dict[str, Any]:
    return {"path": path, "rule": rule, "severity": severity, "scanner": "test", "message": rule}
