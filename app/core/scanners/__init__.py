"""Every scanner hfvet runs, as an explicit tuple (grep-able, no import magic)."""

from __future__ import annotations

from app.core.scanners.base import Scanner


def all_scanners() -> tuple[Scanner, ...]:
    return ()
