"""The load closure: what each runtime would import, run, install and fetch for one repo.

Computed from the loader map (``loader_map``) and the repo's small text files, never by importing
or running anything. Each item is one thing one runtime surface does; the report lists them (the
``load-closure`` findings), and the remote-code analysis treats every code item as load-time code.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

from app.core.loaders.schema import Gate, Kind, Surface

ReadText = Callable[[str], str]  # repo path -> its text; raises on a file it will not read


@dataclass(frozen=True)
class ClosureItem:
    surface: str  # the loader-map entry, e.g. `endpoints.handler`
    runtime: str
    kind: Kind
    gate: Gate
    path: str  # the file that names it (or is it)
    target: str  # a repo path (code, hook), `org/name` (repo), a requirement, a dotted name
    repo: str | None = None  # the other Hub repo it comes from, if any
    revision: str | None = None  # as written; None: the default branch
    carries_trust: bool = False  # the user's trust_remote_code goes with it to `repo`
    runs: tuple[str, ...] = ()  # what the runtime calls in it (`Class.method`, `*`)
    local: bool = True  # the target is a file of this repo (False: a library, another repo, a package)

    def evidence(self) -> str:
        """The finding's evidence: one JSON object, parsed back by ``parse_item``."""
        data = asdict(self)
        data["kind"], data["gate"], data["runs"] = str(self.kind), str(self.gate), list(self.runs)
        return json.dumps(data, sort_keys=True)


def parse_item(evidence: str | None) -> ClosureItem | None:
    try:
        data = json.loads(evidence or "")
        data["kind"], data["gate"] = Kind(data["kind"]), Gate(data["gate"])
        data["runs"] = tuple(data.get("runs") or ())
        return ClosureItem(**data)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def matches(surface: Surface, path: str) -> bool:
    """Whether a surface reads ``path`` (patterns are case-sensitive, as loaders open files)."""
    return _compiled(surface.files).match(path) is not None


@functools.lru_cache(maxsize=256)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for a surface's patterns: scanning every path of a big repo stays cheap."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def surfaces_for(surfaces: Iterable[Surface], path: str) -> list[Surface]:
    return [s for s in surfaces if matches(s, path)]


def code_roles(items: Iterable[ClosureItem]) -> dict[str, tuple[ClosureItem, ...]]:
    """Repo path -> the closure items that make a runtime import or run it."""
    roles: dict[str, list[ClosureItem]] = {}
    for item in items:
        if item.local and item.kind in (Kind.CODE, Kind.HOOK):
            roles.setdefault(item.target, []).append(item)
    return {path: tuple(found) for path, found in roles.items()}


def by_runtime(items: Sequence[ClosureItem]) -> dict[str, list[ClosureItem]]:
    out: dict[str, list[ClosureItem]] = {}
    for item in items:
        out.setdefault(item.runtime, []).append(item)
    return out


def unique(items: Iterable[ClosureItem]) -> Iterator[ClosureItem]:
    yield from dict.fromkeys(items)


CLOSURE_RULE = "load-closure"


class _Evidenced(Protocol):
    @property
    def rule(self) -> str: ...

    @property
    def evidence(self) -> str | None: ...


def closure_from(findings: Iterable[_Evidenced]) -> tuple[ClosureItem, ...]:
    """The report's ``closure`` (and the policy's): the items of ``load-closure`` findings, once each, in order."""
    items = (parse_item(f.evidence) for f in findings if f.rule == CLOSURE_RULE)
    return tuple(unique(item for item in items if item is not None))
