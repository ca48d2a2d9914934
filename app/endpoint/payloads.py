"""The Hub's JSON shapes, built from an approved manifest (shared/reference/hub-protocol.md §1.1, §4).

Only the approved files exist; no entry carries `xetHash`, so every client downloads over plain HTTP.
"""

from __future__ import annotations

import hashlib
from typing import Any

from app.core.manifest import ManifestFile
from app.services.hub_endpoint import Served


def lfs_pointer(entry: ManifestFile) -> bytes:
    """The git-lfs pointer an LFS file is stored as: its git blob id is the entry's `oid` on the Hub."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{entry.sha256}\nsize {entry.size}\n".encode()


def git_oid(entry: ManifestFile) -> str:
    """The entry's git blob id: of the pointer for an LFS file, else the manifest's own."""
    if not entry.sha256:
        return entry.blob_id or ""
    pointer = lfs_pointer(entry)
    return hashlib.sha1(b"blob %d\0" % len(pointer) + pointer, usedforsecurity=False).hexdigest()


def etag(entry: ManifestFile) -> str:
    """What huggingface_hub names the cached blob by: the sha256 of an LFS file, else its git blob id."""
    return entry.sha256 or entry.blob_id or ""


def model_info(served: Served, *, blobs: bool, expand: list[str]) -> dict[str, Any]:
    org = served.repo.split("/")[0]
    info: dict[str, Any] = {
        "_id": served.repo, "id": served.repo, "modelId": served.repo, "author": org, "sha": served.commit,
        "private": False, "disabled": False, "gated": False, "tags": [],
        "siblings": [sibling(entry, blobs) for entry in sorted_files(served)],
    }
    if expand:  # only the keys asked for, and the id
        return {key: value for key, value in info.items() if key in expand or key == "id"}
    return info


def sibling(entry: ManifestFile, blobs: bool) -> dict[str, Any]:
    if not blobs:
        return {"rfilename": entry.path}
    out: dict[str, Any] = {"rfilename": entry.path, "blobId": git_oid(entry), "size": entry.size}
    if entry.sha256:
        out["lfs"] = {"sha256": entry.sha256, "size": entry.size, "pointerSize": len(lfs_pointer(entry))}
    return out


def file_entry(entry: ManifestFile) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "file", "path": entry.path, "oid": git_oid(entry), "size": entry.size}
    if entry.sha256:
        out["lfs"] = {"oid": entry.sha256, "size": entry.size, "pointerSize": len(lfs_pointer(entry))}
    return out


def directory_entry(path: str) -> dict[str, Any]:
    # A tree's oid is not in the manifest; a stable stand-in from its path (clients only display it).
    oid = hashlib.sha1(f"tree {path}".encode(), usedforsecurity=False).hexdigest()
    return {"type": "directory", "path": path, "oid": oid, "size": 0}


def directories(served: Served) -> set[str]:
    """Every folder the approved files are in."""
    found: set[str] = set()
    for path in served.files:
        parts = path.split("/")[:-1]
        found.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return found


def sorted_files(served: Served) -> list[ManifestFile]:
    return [served.files[path] for path in sorted(served.files)]


def children(served: Served, folder: str, recursive: bool) -> list[dict[str, Any]]:
    """The tree under ``folder`` ("" the root), folders and files, in path order."""
    prefix = f"{folder}/" if folder else ""
    paths = sorted({*served.files, *directories(served)})
    under = [p for p in paths if p.startswith(prefix) and (recursive or "/" not in p[len(prefix):])]
    return [file_entry(served.files[p]) if p in served.files else directory_entry(p) for p in under]


def refs(branch: str, commit: str | None, include_prs: bool) -> dict[str, Any]:
    """The branch asked about at the commit it is served at (none when refused)."""
    branches = [] if commit is None else [{"name": branch, "ref": f"refs/heads/{branch}", "targetCommit": commit}]
    out: dict[str, Any] = {"branches": branches, "converts": [], "tags": []}
    if include_prs:
        out["pullRequests"] = []
    return out


def commits(served: Served, formatted: bool) -> list[dict[str, Any]]:
    """The served commit alone: history before it was not vetted, so it is not shown."""
    title = f"approved by hfvet: {served.repo}@{served.commit}"
    entry: dict[str, Any] = {"id": served.commit, "title": title, "message": "", "authors": [],
                             "date": "1970-01-01T00:00:00.000Z"}
    if formatted:
        entry["formatted"] = {"title": title, "message": ""}
    return [entry]
