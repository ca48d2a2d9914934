"""Small helpers to lay out repo files and the fixture hub's `.hub.json`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

HUB_META = ".hub.json"


def write_text(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def write_json(repo: Path, rel: str, data: Any) -> None:
    write_text(repo, rel, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def write_bytes(repo: Path, rel: str, data: bytes) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def stable_object_id(repo_id: str) -> str:
    """A 24-hex `_id` like the Hub's, stable per repo id."""
    return hashlib.sha256(repo_id.encode()).hexdigest()[:24]


def hub_meta(repo_id: str, *, created: str, modified: str, downloads: int, likes: int,
             tags: list[str], card: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "_id": stable_object_id(repo_id),
        "author": repo_id.split("/", 1)[0],
        "createdAt": created,
        "lastModified": modified,
        "downloads": downloads,
        "likes": likes,
        "tags": tags,
        "cardData": card,
        **extra,
    }


def write_hub_meta(repo: Path, meta: dict[str, Any]) -> None:
    write_json(repo, HUB_META, meta)
