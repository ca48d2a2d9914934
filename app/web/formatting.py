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




def diff_rows(lines: list[str]) -> list[tuple[str, str, str, str]]:
    """A unified diff's lines as (kind, before, changed, after): for a removed line followed by an
    added one, ``changed`` is the part between their common start and end (marked on the page), so a
    one-line template that changed at its end shows where."""
    rows = [(_kind(line), line, "", "") for line in lines]
    for i in range(len(rows) - 1):
        (kind, old, _, _), (next_kind, new, _, _) = rows[i], rows[i + 1]
        if kind == "del" and next_kind == "add" and (i == 0 or rows[i - 1][0] != "del"):
            start = _common_prefix(old[1:], new[1:]) + 1
            end = _common_suffix(old[start:], new[start:])
            rows[i] = ("del", old[:start], old[start:len(old) - end], old[len(old) - end:])
            rows[i + 1] = ("add", new[:start], new[start:len(new) - end], new[len(new) - end:])
    return rows


def _kind(line: str) -> str:
    if line.startswith(("+++", "---", "@@")):
        return "head"
    return {"+": "add", "-": "del"}.get(line[:1], "ctx")


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _common_suffix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


FILTERS: dict[str, Callable[..., Any]] = {"short": short, "when": when, "size": size, "diff_rows": diff_rows}
