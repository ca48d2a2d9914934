"""Helpers for the client tests: what the gate approved, what the fixture hub holds, what a client got."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from tests.integration.endpoint.conftest import Endpoint, Upstream


def gate_doc(ep: Endpoint, repo: str, revision: str | None = None) -> dict[str, Any]:
    params = {"repo": repo} | ({"revision": revision} if revision else {})
    doc: dict[str, Any] = httpx.get(f"{ep.url}/gate", params=params, timeout=30).json()
    return doc


def approved(ep: Endpoint, repo: str) -> tuple[str, set[str]]:
    """The approved commit of ``repo``'s main and its manifest's paths, as GET /gate says."""
    doc = gate_doc(ep, repo)
    assert doc["status"] == "approved", doc
    return doc["revision"], {f["path"] for f in doc["files"]}


def files_under(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (symlinks followed) by relative path, except huggingface_hub's .cache."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*")
            if p.is_file() and ".cache" not in p.relative_to(folder).parts}


def upstream_bytes(upstream: Upstream, repo: str, paths: set[str]) -> dict[str, bytes]:
    return {path: (upstream.root / repo / path).read_bytes() for path in paths}


def repo_cache(cache: Path, repo: str) -> Path:
    return cache / f"models--{repo.replace('/', '--')}"


def snapshot_files(cache: Path, repo: str) -> list[str]:
    """The repo's snapshot entries and blobs in a client cache (empty when nothing of it landed)."""
    folder = repo_cache(cache, repo)
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.relative_to(folder).parts[0] in ("snapshots", "blobs") and (p.is_file() or p.is_symlink()))


def client_env(hub: str, home: Path, **extra: str) -> dict[str, str]:
    """A client process's environment: HF_ENDPOINT set, nothing of this machine's HF_* (tokens, xet off)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HFVET_", "HUGGING"))}
    return env | {"HF_ENDPOINT": hub, "HF_HOME": str(home), "HF_HUB_DISABLE_TELEMETRY": "1"} | extra


def run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          check=False)


def hf_cli() -> str:
    """The `hf` script installed with huggingface_hub beside this interpreter."""
    found = Path(sys.executable).parent / "hf"
    assert found.exists(), f"no `hf` script beside {sys.executable}"
    return str(found)


def copy_repo(upstream: Upstream, source: str, target: str) -> Path:
    """A new repo on the fixture hub with ``source``'s files (its own commit history from here on)."""
    folder = upstream.root / target
    shutil.copytree(upstream.root / source, folder, ignore=shutil.ignore_patterns(".revisions"))
    return folder
