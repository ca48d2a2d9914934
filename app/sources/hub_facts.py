"""Turn the Hub's ``ModelInfo`` (at one commit, with file metadata) into a ``Manifest``.

The identity facts keep the Hub's own JSON key names (``createdAt``, ``cardData``...) so trust
policies read the same words as the Hub API documentation.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from huggingface_hub.hf_api import ModelInfo, RepoFile, RepoSibling

from app.core.ids import is_commit
from app.core.manifest import Manifest, ManifestFile, RepoIdentity
from app.sources.hub_errors import HubProtocolError

_SHA256 = re.compile(r"[0-9a-f]{64}")


def build_manifest(info: ModelInfo, repo_id: str, requested: str, endpoint: str) -> Manifest:
    commit = pinned_commit(info, requested)
    if info.siblings is None:
        raise HubProtocolError(f"{repo_id}@{commit}: the hub returned no file list")
    files = tuple(_file(s, repo_id) for s in info.siblings)
    paths = [f.path for f in files]
    if len(set(paths)) != len(paths):
        raise HubProtocolError(f"{repo_id}@{commit}: the hub listed a file twice")
    facts = identity_facts(info) | {"requestedRevision": requested, "endpoint": endpoint}
    return Manifest(RepoIdentity(repo_id, commit, facts), files)


def reconcile_tree(manifest: Manifest, tree: list[RepoFile]) -> Manifest:
    """Add files the recursive tree lists but model info left out; sizes must agree.

    ``snapshot_download`` fetches by the tree, so a file missing from model info's siblings
    would be deployed without ever being vetted.
    """
    known = {f.path: f for f in manifest.files}
    extra: list[ManifestFile] = []
    for entry in tree:
        listed = known.get(entry.path)
        if listed is None:
            sibling = RepoSibling(entry.path, entry.size, entry.blob_id, entry.lfs)
            extra.append(_file(sibling, manifest.identity.repo_id or ""))
        elif listed.size != entry.size:
            raise HubProtocolError(
                f"{manifest.identity.repo_id}: model info and tree disagree on the size of {entry.path!r} "
                f"({listed.size} vs {entry.size})"
            )
    return Manifest(manifest.identity, manifest.files + tuple(extra)) if extra else manifest


def pinned_commit(info: ModelInfo, requested: str) -> str:
    sha = info.sha or ""
    if not is_commit(sha):
        raise HubProtocolError(f"{info.id}: {requested!r} did not resolve to a 40-hex commit (got {sha!r})")
    if is_commit(requested) and requested != sha:
        raise HubProtocolError(f"{info.id}: asked for commit {requested}, the hub answered for {sha}")
    return sha


def identity_facts(info: ModelInfo) -> dict[str, Any]:
    card = info.card_data.to_dict() if info.card_data is not None else None  # type: ignore[no-untyped-call]
    facts = {
        "id": info.id,
        "_id": getattr(info, "_id", None),
        "author": info.author,
        "sha": info.sha,
        "createdAt": info.created_at,
        "lastModified": info.last_modified,
        "private": info.private,
        "gated": info.gated,
        "disabled": info.disabled,
        "tags": info.tags or [],
        "cardData": card,
        "baseModels": info.base_models,
        "library_name": info.library_name,
        "pipeline_tag": info.pipeline_tag,
        "downloads": info.downloads,
        "likes": info.likes,
        "securityRepoStatus": info.security_repo_status,
    }
    return {key: _jsonable(value) for key, value in facts.items()}


def _file(sibling: RepoSibling, repo_id: str) -> ManifestFile:
    path = sibling.rfilename
    if not _safe_path(path):
        raise HubProtocolError(f"{repo_id}: unsafe file path from the hub: {path!r}")
    if sibling.size is None or sibling.size < 0:
        raise HubProtocolError(f"{repo_id}: the hub gave no size for {path!r}")
    sha256 = sibling.lfs.sha256 if sibling.lfs is not None else None
    if sha256 is not None and not _SHA256.fullmatch(sha256):
        raise HubProtocolError(f"{repo_id}: malformed LFS sha256 for {path!r}")
    if sibling.lfs is not None and sibling.lfs.size != sibling.size:
        raise HubProtocolError(f"{repo_id}: LFS size and file size disagree for {path!r}")
    return ManifestFile(path=path, size=sibling.size, sha256=sha256, blob_id=sibling.blob_id)


def _safe_path(path: str) -> bool:
    # These paths later name files on disk (hfvet download): nothing absolute, no traversal.
    if not path or "\\" in path or "\0" in path:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
