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
def entries() -> dict[str, Entry]:
    # A missing or broken file raises: silently losing the denylist would weaken every verdict.
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    found = {name: Entry(category, kind, sink)
             for section in data["derived"].values()
             for name, (category, kind, _next_hop, sink) in section.items()}
    for name, (category, does, _why_missed) in data["hand_picked"].items():
        found.setdefault(name, Entry(category, "hand-picked", does))
    return found


def lookup(dotted: str) -> Entry | None:
    return entries().get(dotted)


def module_import(module: str) -> tuple[str, Entry] | None:
    """The first package or module on the way to ``module`` whose import alone reaches a sink."""
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        entry = entries().get(prefix)
        if entry is not None and entry.kind == MODULE_IMPORT:
            return prefix, entry
    return None
