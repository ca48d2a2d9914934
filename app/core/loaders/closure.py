"""Which loader-map surfaces read a repo path (the items they yield are ``app.core.closure`` values).

A surface's path patterns are compiled once into one regex, so matching every path of a big repo
against every surface stays cheap.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Iterable

from app.core.loaders.schema import Surface


def matches(surface: Surface, path: str) -> bool:
    """Whether a surface reads ``path`` (patterns are case-sensitive, as loaders open files)."""
    return _compiled(surface.files).match(path) is not None


@functools.lru_cache(maxsize=256)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for a surface's patterns: scanning every path of a big repo stays cheap."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def surfaces_for(surfaces: Iterable[Surface], path: str) -> list[Surface]:
    return [s for s in surfaces if matches(s, path)]
