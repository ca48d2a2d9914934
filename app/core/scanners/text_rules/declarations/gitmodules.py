"""``.gitmodules``: git's config syntax (git-config(1) "CONFIGURATION FILE"), read for each
``[submodule "name"]`` section's ``url``, which ``git clone --recursive`` / ``git submodule update
--init`` clone. Section and key names are case-insensitive; values may be quoted, carry ``#``/``;``
comments outside quotes and continue over lines ending in a backslash. The old ``[submodule.name]``
form is accepted too. A relative url (``../x.git``, ``./x``) resolves against the superproject's
own remote (same host, same owner's reach), so it names no new source and is skipped.
"""

from __future__ import annotations

import re

from app.core.scanners.text_rules.declarations.common import MAX_LINE_TEXT, Reading, at
from app.core.scanners.text_rules.declared import Declared

_SECTION = re.compile(r'^\s*\[\s*(?P<name>[A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]')
_KEY = re.compile(r"^\s*(?P<key>[A-Za-z][A-Za-z0-9-]*)\s*=\s*(?P<value>.*)$")


def read(text: str) -> Reading:
    found = Reading()
    in_submodule = False
    for number, line in _logical_lines(text):
        section = _SECTION.match(line)
        if section:
            in_submodule = section.group("name").lower().split(".")[0] == "submodule"
            line = line[section.end():]  # git allows `[submodule "x"] url = ...` on one line
        key = _KEY.match(line)
        if not (in_submodule and key and key.group("key").lower() == "url"):
            continue
        url = _value(key.group("value"))
        if url and not url.startswith(("./", "../")):
            found.add(Declared("git", url, at(number),
                               line.strip()[:MAX_LINE_TEXT], ".gitmodules submodule url"))
    return found


def _logical_lines(text: str) -> list[tuple[int, str]]:
    lines: list[tuple[int, str]] = []
    pending, first = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        first = first if pending else number
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            pending += raw[:-1]
            continue
        lines.append((first, pending + raw))
        pending = ""
    if pending:
        lines.append((first, pending))
    return lines


def _value(raw: str) -> str:
    """The value as git reads it: quotes removed, comments outside quotes cut, escapes resolved."""
    out: list[str] = []
    quoted = False
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "\\" and index + 1 < len(raw):
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(raw[index + 1], raw[index + 1]))
            index += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        index += 1
    return "".join(out).strip()
