"""LocalSource: a downloaded snapshot directory, or one file, as a byte-range Source."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from app.core.limits import Limits
from app.core.manifest import Manifest, ManifestFile, RepoIdentity
from app.core.ports import SourceError
from app.sources.local_listing import Entry, list_path

# Opening never follows a link swapped in after listing, nor blocks on a FIFO swapped in.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


class LocalSource:
    """Serves the regular files of a snapshot; links are followed only inside it (see local_listing)."""

    def __init__(
        self, root: Path, repo_id: str | None = None, revision: str | None = None, limits: Limits | None = None
    ) -> None:
        self._identity = RepoIdentity(repo_id, revision)
        self._bytes_read = 0
        self._lock = threading.Lock()
        entries = list_path(root, (limits or Limits()).max_listed_entries)
        self._entries = {e.path: e for e in entries}
        self._files = tuple(ManifestFile(e.path, e.size, link=e.link) for e in entries)

    @property
    def bytes_read(self) -> int:
        return self._bytes_read

    def manifest(self) -> Manifest:
        return Manifest(self._identity, self._files)

    def size(self, path: str) -> int:
        _, entry = self._servable(path)
        return entry.size

    def read(self, path: str, offset: int, length: int) -> bytes:
        real, _ = self._servable(path)
        try:
            data = _read_regular(real, offset, length)
        except OSError as exc:
            raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
        with self._lock:
            self._bytes_read += len(data)
        return data

    def _servable(self, path: str) -> tuple[Path, Entry]:
        # Only paths in the manifest are readable: nothing outside the snapshot leaks in.
        entry = self._entries.get(path)
        if entry is None:
            raise SourceError(f"unknown file {path!r}")
        if entry.real is None:
            raise SourceError(f"cannot read {path}: {entry.refused}")
        return entry.real, entry


def _read_regular(real: Path, offset: int, length: int) -> bytes:
    fd = os.open(real, _OPEN_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("no longer a regular file (it changed after listing)")
        return _pread_all(fd, offset, length)
    finally:
        os.close(fd)


def _pread_all(fd: int, offset: int, length: int) -> bytes:
    """Exactly the bytes asked for (fewer only at end of file): no read-ahead buffer for tiny reads."""
    chunks: list[bytes] = []
    while length > 0:
        data = os.pread(fd, length, offset)
        if not data:
            break
        chunks.append(data)
        offset += len(data)
        length -= len(data)
    return b"".join(chunks)
