"""Per-file read cache so several scanners looking at one file fetch each byte once."""

from __future__ import annotations

import bisect
import threading

from app.core.manifest import Manifest
from app.core.ports import Source


class _Segments:
    """Non-overlapping cached byte ranges of one file, sorted by offset."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.chunks: list[bytes] = []

    def gaps(self, offset: int, end: int) -> list[tuple[int, int]]:
        """The sub-ranges of [offset, end) not cached yet."""
        gaps, pos = [], offset
        i = max(0, bisect.bisect_right(self.starts, offset) - 1)
        while pos < end and i < len(self.starts):
            start, stop = self.starts[i], self.starts[i] + len(self.chunks[i])
            if stop <= pos:
                i += 1
                continue
            if start >= end:
                break
            if start > pos:
                gaps.append((pos, start))
            pos = max(pos, stop)
            i += 1
        if pos < end:
            gaps.append((pos, end))
        return gaps

    def add(self, offset: int, data: bytes) -> None:
        """Insert data at offset, trimming the part that is already cached."""
        for start, stop in self.gaps(offset, offset + len(data)):
            i = bisect.bisect_left(self.starts, start)
            self.starts.insert(i, start)
            self.chunks.insert(i, data[start - offset : stop - offset])

    def get(self, offset: int, end: int) -> bytes:
        i = max(0, bisect.bisect_right(self.starts, offset) - 1)
        out = bytearray()
        while len(out) < end - offset and i < len(self.starts):
            start, chunk = self.starts[i], self.chunks[i]
            pos = offset + len(out)
            if start <= pos < start + len(chunk):
                out += chunk[pos - start : end - start]
            elif start > pos:
                break  # a hole: only at end of file, where the inner source returned less
            i += 1
        return bytes(out)


class CachingSource:
    """Wraps a Source; keeps the ranges read from a file until ``forget(path)``.

    Overlapping reads by different scanners fetch only the bytes not fetched before, so
    ``bytes_read`` counts every byte of the file at most once.
    """

    def __init__(self, inner: Source) -> None:
        self._inner = inner
        self._files: dict[str, _Segments] = {}
        self._fetched: dict[str, int] = {}  # path -> bytes fetched from the inner source while it was cached
        self._lock = threading.Lock()

    def manifest(self) -> Manifest:
        return self._inner.manifest()

    def size(self, path: str) -> int:
        return self._inner.size(path)

    @property
    def bytes_read(self) -> int:
        return self._inner.bytes_read

    def read(self, path: str, offset: int, length: int) -> bytes:
        end = offset + length
        with self._lock:
            segments = self._files.setdefault(path, _Segments())
            gaps = segments.gaps(offset, end)
        for start, stop in gaps:
            data = self._inner.read(path, start, stop - start)
            with self._lock:
                segments.add(start, data)
                self._fetched[path] = self._fetched.get(path, 0) + len(data)
        with self._lock:
            return segments.get(offset, end)

    @property
    def uncached(self) -> Source:
        """The wrapped source: reads through it are counted in ``bytes_read`` but cached for no
        file, so they never change what another file's own reads cost (a report stays the same
        whatever order the files are scanned in)."""
        return self._inner

    def forget(self, path: str) -> int:
        """Drop ``path``'s cached ranges; returns the bytes fetched for it until now (the file's own read cost)."""
        with self._lock:
            self._files.pop(path, None)
            return self._fetched.pop(path, 0)
