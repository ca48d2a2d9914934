"""One item of a repo's load closure (``app.core.loaders``): a value, in the report and the policy's facts.

Kept outside the loaders package so the report, its codec and the policy read closures without the
loader map (and its format readers) behind them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Protocol

CLOSURE_RULE = "load-closure"


class Kind(StrEnum):
    CODE = "code"  # a Python module the runtime imports and calls while loading
    HOOK = "hook"  # code the interpreter runs on start-up once the folder is on its path
    NATIVE = "native"  # a native library the runtime loads
    INSTALL = "install"  # packages the runtime installs before loading
    REPO = "repo"  # another Hub repo the runtime fetches and loads
    DATA = "data"  # a file of the repo the runtime deserializes (weights): the format scanners judge it
    TEMPLATE = "template"  # a Jinja template the runtime renders (the template scanner judges it)


class Gate(StrEnum):
    ALWAYS = "always"  # no opt-in: the runtime does it whenever it loads the repo
    TRUST_REMOTE_CODE = "trust_remote_code"  # only with the user's trust_remote_code (or the runtime's equivalent)
    OPT_IN = "opt-in"  # the user asks for it by name (a flag, a call) that the repo only suggests
    INSTALL = "install"  # when the user or a launcher installs the repo as a package


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


def by_runtime(items: Sequence[ClosureItem]) -> dict[str, list[ClosureItem]]:
    out: dict[str, list[ClosureItem]] = {}
    for item in items:
        out.setdefault(item.runtime, []).append(item)
    return out


def unique(items: Iterable[ClosureItem]) -> Iterator[ClosureItem]:
    yield from dict.fromkeys(items)


class _Evidenced(Protocol):
    @property
    def rule(self) -> str: ...

    @property
    def evidence(self) -> str | None: ...


def closure_from(findings: Iterable[_Evidenced]) -> tuple[ClosureItem, ...]:
    """The report's ``closure`` (and the policy's): the items of ``load-closure`` findings, once each, in order."""
    items = (parse_item(f.evidence) for f in findings if f.rule == CLOSURE_RULE)
    return tuple(unique(item for item in items if item is not None))
