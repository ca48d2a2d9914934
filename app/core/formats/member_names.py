"""Archive member names that extraction tools or loaders could write somewhere unexpected.

One check for zip, tar and 7z alike. Names are judged as stored, with both ``/`` and ``\\``
taken as separators: Windows tools (and some loaders) split on either, so ``..\\x`` climbs
out of the target directory there even if a POSIX tool calls it one odd file name.
"""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[/\\]")
_DRIVE = re.compile(r"^[A-Za-z]:")


def unsafe_reason(name: str) -> str | None:
    """Why extracting ``name`` may write outside the target directory, or None if it cannot."""
    if "\x00" in name:
        return "NUL byte in the name: tools cut it at different places"
    if name[:1] in ("/", "\\"):
        return "absolute path"
    if _DRIVE.match(name):
        return "Windows drive-letter path"
    if ".." in _SEPARATORS.split(name):
        return "'..' component climbs out of the target directory"
    return None


def collision_key(name: str) -> str:
    """The path a tool would extract ``name`` to: ``a/./b``, ``a//b``, ``a\\b`` and ``a/b/`` agree."""
    return "/".join(part for part in _SEPARATORS.split(name) if part not in ("", "."))


class DuplicateNames:
    """Remembers the names of one archive to spot two members that extract to one path."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def seen_before(self, name: str) -> bool:
        key = collision_key(name)
        if key in self._seen:
            return True
        self._seen.add(key)
        return False
