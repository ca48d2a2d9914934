"""``.hub.json``: what a fixture repo (or one of its revisions) says about itself."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

META_FILE = ".hub.json"
DEFAULT_DATE = "2024-01-01T00:00:00.000Z"

_HEX64 = re.compile(r"[0-9a-f]{64}")
# Keys that configure the fixture itself and never appear verbatim in model info.
_RESERVED = frozenset({"tokens", "sha256", "commit", "refs", "securityRepoStatus", "securityFileStatus"})


class FixtureConfigError(Exception):
    """A ``.hub.json`` is malformed; the fixture answers 500 rather than guess."""


@dataclass(frozen=True)
class CommitMeta:
    title: str = "Upload folder"
    message: str = ""
    date: str = DEFAULT_DATE
    author: str = "fixture"
    parent: str | None = None  # snapshot name of the previous commit, for commit history


@dataclass(frozen=True)
class SnapshotMeta:
    """Per-revision settings: declared LFS hashes, commit facts, model-info overrides."""

    sha256: dict[str, str] = field(default_factory=dict)
    commit: CommitMeta = field(default_factory=CommitMeta)
    info: dict[str, Any] = field(default_factory=dict)
    file_security: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RepoMeta:
    """Repo-wide settings from the root ``.hub.json``."""

    snapshot: SnapshotMeta = field(default_factory=SnapshotMeta)
    tokens: frozenset[str] = frozenset()
    branches: dict[str, str] = field(default_factory=dict)  # branch name -> .revisions dir
    tags: dict[str, str] = field(default_factory=dict)
    pull_requests: dict[str, str] = field(default_factory=dict)  # "1" (refs/pr/1) -> .revisions dir
    security_repo: dict[str, Any] | None = None

    @property
    def gated(self) -> str | bool:
        value = self.snapshot.info.get("gated", False)
        return value if isinstance(value, str) else bool(value)

    @property
    def private(self) -> bool:
        return bool(self.snapshot.info.get("private", False))

    @property
    def disabled(self) -> bool:
        return bool(self.snapshot.info.get("disabled", False))


def load_repo_meta(repo_dir: Path) -> RepoMeta:
    raw = _read(repo_dir / META_FILE)
    refs = _mapping(raw.get("refs", {}), "refs")
    tokens = raw.get("tokens", [])
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        raise FixtureConfigError(f"{repo_dir / META_FILE}: 'tokens' must be a list of strings")
    security = raw.get("securityRepoStatus")
    return RepoMeta(
        snapshot=_snapshot_meta(raw, repo_dir / META_FILE),
        tokens=frozenset(tokens),
        branches=_str_map(refs.get("branches", {}), "refs.branches"),
        tags=_str_map(refs.get("tags", {}), "refs.tags"),
        pull_requests=_str_map(refs.get("pullRequests", {}), "refs.pullRequests"),
        security_repo=_mapping(security, "securityRepoStatus") if security is not None else None,
    )


def load_snapshot_meta(snapshot_dir: Path) -> SnapshotMeta:
    return _snapshot_meta(_read(snapshot_dir / META_FILE), snapshot_dir / META_FILE)


def _snapshot_meta(raw: dict[str, Any], where: Path) -> SnapshotMeta:
    sha256 = _str_map(raw.get("sha256", {}), "sha256")
    bad = [p for p, h in sha256.items() if not _HEX64.fullmatch(h)]
    if bad:
        raise FixtureConfigError(f"{where}: sha256 of {bad} is not 64 lowercase hex digits")
    commit = _mapping(raw.get("commit", {}), "commit")
    try:
        commit_meta = CommitMeta(**commit)
    except TypeError as exc:
        raise FixtureConfigError(f"{where}: bad 'commit': {exc}") from None
    info = {k: v for k, v in raw.items() if k not in _RESERVED}
    return SnapshotMeta(sha256, commit_meta, info, _mapping(raw.get("securityFileStatus", {}), "sfs"))


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FixtureConfigError(f"{path}: {exc}") from None
    return _mapping(raw, str(path))


def _mapping(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FixtureConfigError(f"{what} must be a JSON object")
    return value


def _str_map(value: Any, what: str) -> dict[str, str]:
    mapping = _mapping(value, what)
    if not all(isinstance(v, str) for v in mapping.values()):
        raise FixtureConfigError(f"{what} values must be strings")
    return {str(k): v for k, v in mapping.items()}
