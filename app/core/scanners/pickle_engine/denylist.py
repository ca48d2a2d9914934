"""The derived dangerous-callable catalogue: ``data/dangerous_callables.json``.

``scripts/derive_denylist.py`` writes it from library source (docs/detection.md): every callable
whose body reaches a sink (code execution, process creation, file writes, dynamic import,
network, native code, deserialization) within a bounded call-graph walk, plus the hand-picked
entries the walk cannot see, each with its reason. Loaded once, on the first lookup.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import NamedTuple

DATA_FILE = Path(__file__).parents[1] / "data" / "dangerous_callables.json"
MODULE_IMPORT = "module import"


class Entry(NamedTuple):
    category: str  # "process creation", "code execution", ...
    kind: str  # function, class, method, alias, sink, module import, hand-picked
    sink: str  # the primitive it reaches (hand-picked: what a call does)

    def describe(self, name: str) -> str:
        if self.kind == "hand-picked":
            return f"{self.sink} ({self.category})"
        if self.kind == "sink" or self.sink == name:
            return f"a {self.category} primitive"
        if self.kind == MODULE_IMPORT:
            return f"importing {name} reaches {self.category} via {self.sink}"
        return f"reaches {self.category} via {self.sink}"


@functools.cache
def entries() -> dict[str, list[str]]:
    """name -> [category, kind, next hop, sink], the JSON lists as parsed (no per-entry objects:
    the first lookup pays only the parse)."""
    # A missing or broken file raises: silently losing the denylist would weaken every verdict.
    data = json.loads(DATA_FILE.read_bytes())
    found: dict[str, list[str]] = {}
    for section in data["derived"].values():
        found.update(section)
    for name, (category, does, _why_missed) in data["hand_picked"].items():
        found.setdefault(name, [category, "hand-picked", "", does])
    return found


def lookup(dotted: str) -> Entry | None:
    raw = entries().get(dotted)
    return None if raw is None else Entry(raw[0], raw[1], raw[3])


def module_import(module: str) -> tuple[str, Entry] | None:
    """The first package or module on the way to ``module`` whose import alone reaches a sink."""
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        entry = lookup(prefix)
        if entry is not None and entry.kind == MODULE_IMPORT:
            return prefix, entry
    return None
