"""The one seam between the pure core and the outside world: a byte-range Source."""

from __future__ import annotations

from typing import Protocol

from app.core.manifest import Manifest


class SourceError(Exception):
    """A source could not list or read something. Scanners turn it into a failed scan."""


class Source(Protocol):
    """Random access to the files of one repo at one pinned revision.

    Scanners only ever call ``read`` and ``size``; they never see a local path, so a
    Range-reading hub source and a local directory are interchangeable.
    """

    def manifest(self) -> Manifest: ...

    def size(self, path: str) -> int: ...

    def read(self, path: str, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes at ``offset`` (fewer only at end of file)."""
        ...

    @property
    def bytes_read(self) -> int:
        """Bytes actually fetched so far, for the report's stats."""
        ...
