"""JSON bodies in the Hub's shapes (note the key drift: siblings ``blobId``/``lfs.sha256``,
tree and paths-info ``oid``/``lfs.oid``). Never any ``xetHash``: the client must use plain HTTP."""

from __future__ import annotations

import hashlib
from typing import Any

from app.hubfixture.card import card_data
from app.hubfixture.meta import DEFAULT_DATE
from app.hubfixture.repo import Refs, Repo
from app.hubfixture.snapshot import FileEntry, Snapshot

_UNSCANNED = {"scansDone": False, "filesWithIssues": []}  # the fixture never claims a scan it did not do


def model_info(
    repo: Repo, snap: Snapshot, *, blobs: bool, security: bool, expand: list[str]
) -> dict[str, Any]:
    org = repo.repo_id.split("/", 1)[0]
    data: dict[str, Any] = {
        "_id": hashlib.sha1(repo.repo_id.encode(), usedforsecurity=False).hexdigest()[:24],
        "author": org,
        "lastModified": snap.meta.commit.date,
        "createdAt": DEFAULT_DATE,
        "downloads": 0,
        "likes": 0,
        "tags": [],
        "library_name": None,
        "spaces": [],
        "usedStorage": sum(f.size for f in snap.files),
    }
    data |= repo.meta.snapshot.info | snap.meta.info  # a revision may override card data etc.
    if "cardData" not in data:
        card = card_data(snap)  # the Hub's: the README's front matter
        if card is not None:
            data["cardData"] = card
    data |= {
        "id": repo.repo_id,
        "modelId": repo.repo_id,
        "sha": snap.commit,
        "private": repo.meta.private,
        "gated": repo.meta.gated,
        "disabled": repo.meta.disabled,
        "siblings": [sibling(f, blobs) for f in snap.files],
    }
    if security:
        data["securityRepoStatus"] = repo.meta.security_repo or dict(_UNSCANNED)
    if expand:
        data = {k: v for k, v in data.items() if k in expand or k in ("id", "_id")}
    return data


def sibling(f: FileEntry, blobs: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"rfilename": f.path}
    if blobs:
        entry |= {"blobId": f.blob_id, "size": f.size}
        if f.sha256:
            entry["lfs"] = {"sha256": f.sha256, "size": f.size, "pointerSize": f.pointer_size}
    return entry


def tree_entry(snap: Snapshot, path: str, expand: bool) -> dict[str, Any]:
    f = snap.by_path.get(path)
    entry: dict[str, Any]
    if f is None:
        entry = {"type": "directory", "oid": snap.tree_id(path), "size": 0, "path": path}
    else:
        entry = {"type": "file", "oid": f.blob_id, "size": f.size, "path": path}
        if f.sha256:
            entry["lfs"] = {"oid": f.sha256, "size": f.size, "pointerSize": f.pointer_size}
    if expand:
        commit = snap.meta.commit
        entry["lastCommit"] = {"id": snap.commit, "title": commit.title, "date": commit.date}
        if f is not None and path in snap.meta.file_security:
            entry["securityFileStatus"] = snap.meta.file_security[path]
    return entry


def refs(table: Refs, include_prs: bool) -> dict[str, Any]:
    def refinfo(kind: str, name: str, snap: Snapshot) -> dict[str, str]:
        return {"name": name, "ref": f"refs/{kind}/{name}", "targetCommit": snap.commit}

    data: dict[str, Any] = {
        "branches": [refinfo("heads", n, s) for n, s in sorted(table.branches.items())],
        "converts": [],
        "tags": [refinfo("tags", n, s) for n, s in sorted(table.tags.items())],
    }
    if include_prs:
        data["pullRequests"] = [refinfo("pr", n, s) for n, s in sorted(table.pull_requests.items())]
    return data


def commit(snap: Snapshot, formatted: bool) -> dict[str, Any]:
    meta = snap.meta.commit
    data: dict[str, Any] = {
        "id": snap.commit,
        "title": meta.title,
        "message": meta.message,
        "date": meta.date,
        "authors": [{"user": meta.author}],
    }
    if formatted:
        data["formatted"] = {"title": meta.title, "message": meta.message}
    return data
