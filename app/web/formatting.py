"""Template filters: how shas, times, sizes and severities read on a page."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any


def short(sha: str | None) -> str:
    return (sha or "")[:12]


def when(at: datetime | None) -> str:
    return "" if at is None else at.strftime("%Y-%m-%d %H:%M UTC")


def size(n: int | None) -> str:
    if n is None:
        return ""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # not reached


FILTERS: dict[str, Callable[..., Any]] = {"short": short, "when": when, "size": size}
