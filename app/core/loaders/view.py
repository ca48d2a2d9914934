"""One file as the loader-map readers see it, and the closure items they make of its values."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from app.core.closure import ClosureItem
from app.core.loaders.schema import Surface

REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}$")


@dataclass(frozen=True)
class FileView:
    """One file as a reader sees it."""

    path: str
    text: str
    present: frozenset[str]  # every path of the repo
    own_repo: str | None


def make_item(surface: Surface, view: FileView, target: str, **extra: Any) -> ClosureItem:
    """An item of ``surface``; ``extra`` fields (``runs`` a value names, a repo) override the surface's."""
    fields: dict[str, Any] = {"runs": surface.runs} | extra
    return ClosureItem(surface.id, surface.runtime, surface.kind, surface.gate, view.path, target, **fields)



def repo_items(surface: Surface, view: FileView, value: str, revision: str | None,
          trust: bool) -> Iterator[ClosureItem]:
    """An ``org/name`` value that is another Hub repo: not a path of this repo, not the repo itself."""
    value = value.strip().removeprefix("hf://").removeprefix("https://huggingface.co/")
    value = value.split(":", 1)[0] if "://" not in value else value  # `org/kernel@rev:function` (hub kernels)
    name, _, pinned = value.partition("@")
    if not REPO_ID.match(name) or name == view.own_repo or is_local(name, view):
        return
    yield make_item(surface, view, name, repo=name, revision=revision or pinned or None, carries_trust=trust,
                local=False)


def is_local(value: str, view: FileView) -> bool:
    here = posixpath.dirname(view.path)
    folders = (value, posixpath.join(here, value)) if here else (value,)
    return any(p == f or p.startswith(f + "/") for f in folders for p in view.present) or value.startswith(".")


def holder_of(data: Any, where: str) -> tuple[str, Any]:
    """The object that holds the value at dotted ``where`` (keys with dots in them: None)."""
    parts = where.split(".")[:-1]
    node = data
    for part in parts:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return where, None
    return ".".join(parts), node
