"""Shared shape for the declaration reader tests: (kind, value) pairs, extra and via checked where they matter."""

from __future__ import annotations

from app.core.scanners.text_rules.declared import Declared


def pairs(found: list[Declared]) -> list[tuple[str, str]]:
    return [(d.kind, d.value) for d in found]
