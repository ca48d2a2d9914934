"""Template filters: how shas, times, sizes, severities, hub links and unusual characters read on a page."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup, escape

from app.core.findings import Severity
from app.services.hub_links import hub_tree_url
from app.settings import Settings

SEVERITIES = tuple(s.value for s in sorted(Severity, reverse=True))  # the worst first
# FULLWIDTH forms of ASCII (U+FF01-U+FF5E), e.g. DeepSeek's `<\uff5cUser\uff5c>`: most Latin fonts have no glyph.
_FULLWIDTH = re.compile("[\uff01-\uff5e]")
_WIDE = Markup('<abbr class="wide" title="U+{code} {name}">{twin}</abbr>')  # format() escapes each value

def short(sha: str | None) -> str:
    return (sha or "")[:12]


def when(at: datetime | str | None) -> str:
    """`2026-05-02 22:48 UTC`; an ISO-8601 string (the hub's createdAt) reads the same, and a string
    that is no time is shown as it is."""
    if isinstance(at, str):
        try:
            return when(datetime.fromisoformat(at))
        except ValueError:
            return at
    if at is None:
        return ""
    return (at.astimezone(UTC) if at.tzinfo else at).strftime("%Y-%m-%d %H:%M UTC")


def plural(count: int | None, word: str) -> str:
    """``word`` as it reads after ``count``: `1 repo`, `2 repos` (`{{ n }} {{ n|plural('repo') }}`)."""
    return word if count == 1 else f"{word}s"


def size(n: int | None) -> str:
    if n is None:
        return ""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # not reached


def severity_counts(findings: Iterable[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """How many findings of each severity, the worst first, every level listed (zero included)."""
    found = Counter(str(f.get("severity")) for f in findings)
    return [(level, found.get(level, 0)) for level in SEVERITIES]


def readable(text: object) -> Markup:
    """``text``, escaped, with each fullwidth ASCII form shown as its ASCII twin, marked and named (hover:
    U+FF5C FULLWIDTH VERTICAL LINE). Fonts without those glyphs drew boxes (tofu); showing a plain ``|``
    unmarked would hide that a chat template's token is not ASCII."""
    value = "" if text is None else str(text)
    parts, start = [], 0
    for match in _FULLWIDTH.finditer(value):
        char = match.group(0)
        parts += [escape(value[start:match.start()]),
                  _WIDE.format(code=f"{ord(char):04X}", name=unicodedata.name(char, ""), twin=chr(ord(char) - 0xFEE0))]
        start = match.end()
    return Markup("").join([*parts, escape(value[start:])])


def hub_tree(repo: str, sha: str | None, settings: Settings) -> str:
    """The repo's tree on the configured hub (app.services.hub_links)."""
    return hub_tree_url(settings, repo, sha)



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


FILTERS: dict[str, Callable[..., Any]] = {
    "short": short, "when": when, "size": size, "diff_rows": diff_rows, "severity_counts": severity_counts,
    "readable": readable, "hub_tree": hub_tree, "plural": plural,
}
