"""How deeply a JSON body nests, measured before any handler parses it.

Python's json parser recurses once per level: a body of 10,000 `[` raises RecursionError, which no
handler expected (a plain-text 500, the connection reset). Most bodies open fewer brackets than the
limit and pass on counting alone; the rest are parsed once (valid JSON, so every string ends and the
string pattern below stays linear) and their brackets peeled a level at a time at C speed.
"""

from __future__ import annotations

import json
import re

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')  # unrolled: no backtracking inside a string
_AS_BRACKETS = bytes.maketrans(b"{}", b"[]")  # for depth an object is a list
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def too_deep(body: bytes, limit: int) -> bool:
    """True when ``body`` is JSON nested more than ``limit`` levels; False for shallower JSON and for
    anything that is not JSON (its reader says what is wrong with it)."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False  # brackets inside strings count too: this only ever over-counts
    try:
        json.loads(body)
    except RecursionError:
        return True
    except (ValueError, UnicodeDecodeError):
        return False
    brackets = _STRING.sub(b"", body).translate(_AS_BRACKETS, _NOT_BRACKETS)
    for _ in range(limit):
        if not brackets:
            return False
        # Every innermost pair goes in one pass, and a pair it uncovers waits for the next: one level a pass.
        brackets = brackets.replace(b"[]", b"")
    return bool(brackets)
