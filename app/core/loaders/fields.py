"""Values at a path inside parsed JSON/YAML: ``auto_map.*``, ``custom_pipelines.*.impl``, ``**._target_``.

``*`` is every key of a mapping (or item of a list); ``**`` is any depth, including none. Walks are
bounded in depth and in values, so a hostile config costs little.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MAX_DEPTH = 32
MAX_VALUES = 2000


def values_at(data: Any, path: str) -> list[tuple[str, Any]]:
    """(dotted location, value) for every value ``path`` reaches in ``data``."""
    out: list[tuple[str, Any]] = []
    for found in _walk(data, tuple(path.split(".")), "", 0, set()):
        out.append(found)
        if len(out) >= MAX_VALUES:
            break
    return out


def _walk(value: Any, parts: tuple[str, ...], where: str, depth: int,
          seen: set[tuple[int, int]]) -> Iterator[tuple[str, Any]]:
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict | list):
        # YAML aliases share one object: visiting it once per remaining path keeps a "billion laughs" cheap.
        visit = (id(value), len(parts))
        if visit in seen:
            return
        seen.add(visit)
    if not parts:
        yield where, value
        return
    head, rest = parts[0], parts[1:]
    if head == "**":
        yield from _walk(value, rest, where, depth + 1, seen)
        for key, child in _children(value):
            yield from _walk(child, parts, _join(where, key), depth + 1, seen)
    elif head == "*":
        for key, child in _children(value):
            yield from _walk(child, rest, _join(where, key), depth + 1, seen)
    elif isinstance(value, dict) and head in value:
        yield from _walk(value[head], rest, _join(where, head), depth + 1, seen)


def _children(value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        yield from ((str(k), v) for k, v in value.items())
    elif isinstance(value, list):
        yield from ((str(i), v) for i, v in enumerate(value))


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
