"""The derived remote-code sink catalogue: ``data/code_sinks.json``.

``scripts/derive_code_sinks.py`` writes it from library source (docs/detection.md): every public
callable of the stdlib and of the parsed libraries whose body reaches a process start, code
execution, a native-library load, the network or an unsafe deserialization, with its kind
(``process``, ``exec``, ``native-code``, ``network``, ``deserialize``) and its derivation path.
Loaded once, on the first lookup.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

DATA_FILE = Path(__file__).parents[1] / "data" / "code_sinks.json"


@functools.cache
def catalogue() -> dict[str, tuple[str, str]]:
    """Dotted public name -> (remote-code kind, the primitive it reaches)."""
    # A missing or broken file raises: silently losing the catalogue would weaken every verdict.
    data = json.loads(DATA_FILE.read_bytes())
    found: dict[str, tuple[str, str]] = {}
    for section in data["derived"].values():
        for name, (kind_, _node_kind, path) in section.items():
            found[name] = (kind_, path[-1])
    return found


@functools.cache
def owners() -> frozenset[str]:
    """Classes (and modules) with a member in the catalogue: a name bound to an instance of one is tracked."""
    return frozenset(name.rpartition(".")[0] for name in catalogue())


def lookup(name: str) -> tuple[str, str] | None:
    """(kind, primitive reached) of a resolved call target, or None."""
    return catalogue().get(name)
