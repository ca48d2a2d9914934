"""Random-access byte views: a file in a Source, or bytes already in memory.

Scanners and container readers take a ``Blob`` so the same code walks a top-level
file read by Range requests and a member decompressed out of an archive.
"""

from __future__ import annotations

import bisect
import io
from collections.abc import Iterable

from app.core.limits import ReadBudgetExceeded
from app.core.ports import Blob, Source

READ_BUFFER = 64 * 1024  # large enough to batch zipfile's many small reads
PREFETCH_CHUNK = 1024 * 1024  # one batched read, and the most a PrefetchBlob holds in memory
PREFETCH_GAP = 4096  # spans closer than this are read together (the gap bytes are wasted)


class SourceBlob:
    """One file of a Source; every read goes through the Source's byte accounting."""

    def __init__(self, source: Source, path: str, size: int | None = None) -> None:
        self._source = source
        self.path = path
        self._size = source.size(path) if size is None else size

    @property
    def size(self) -> int:
        return self._size

    def read(self, offset: int, length: int) -> bytes:
        length = max(0, min(length, self._size - offset))
        if length == 0:
            return b""
        return self._source.read(self.path, offset, length)


class BytesBlob:
    def __init__(self, data: bytes | bytearray) -> None:
        self._data = data  # a bytearray is kept as is: copying a big buffer doubles its cost

    @property
    def size(self) -> int:
        return len(self._data)

    def read(self, offset: int, length: int) -> bytes:
        return bytes(self._data[offset : offset + length])


class SliceBlob:
    """Bytes ``[start, start + length)`` of another blob (a stored archive member), read lazily."""

    def __init__(self, inner: Blob, start: int, length: int) -> None:
        self._inner = inner
        self._start = start
        self._size = max(0, min(length, inner.size - start))

    @property
    def size(self) -> int:
        return self._size

    def read(self, offset: int, length: int) -> bytes:
        length = min(length, self._size - offset)
        if length <= 0 or offset < 0:
            return b""
        return self._inner.read(self._start + offset, length)


class BudgetBlob:
    """Counts the bytes a scanner reads from one file and stops it past ``budget``."""

    def __init__(self, inner: Blob, budget: int) -> None:
        self.inner = inner
        self._budget = budget
        self.bytes_read = 0

    @property
    def size(self) -> int:
        return self.inner.size

    def read(self, offset: int, length: int) -> bytes:
        data = self.inner.read(offset, length)
        self.bytes_read += len(data)
        if self.bytes_read > self._budget:
            raise ReadBudgetExceeded(f"read more than {self._budget} bytes from the file")
        return data


class PrefetchBlob:
    """Serves reads that fall inside planned spans from a few batched reads of ``inner``.

    Walking a zip of many tiny members would otherwise cost one source read (one Range
    request) per header and per head. Spans are merged into chunks of at most
    ``PREFETCH_CHUNK`` bytes; one chunk is held at a time. Other reads go straight through.
    """

    def __init__(self, inner: Blob, spans: Iterable[tuple[int, int]]) -> None:
        self.inner = inner
        self._chunks = _coalesce(sorted(spans))
        self._starts = [start for start, _ in self._chunks]
        self._held: tuple[int, bytes] = (-1, b"")

    @property
    def size(self) -> int:
        return self.inner.size

    def read(self, offset: int, length: int) -> bytes:
        i = bisect.bisect_right(self._starts, offset) - 1
        if i < 0 or offset + length > self._chunks[i][1]:
            return self.inner.read(offset, length)
        start, end = self._chunks[i]
        if self._held[0] != start:
            self._held = (start, self.inner.read(start, end - start))
        return self._held[1][offset - start : offset - start + length]


def _coalesce(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    chunks: list[tuple[int, int]] = []
    for start, end in spans:
        if end <= start:
            continue
        if chunks and start - chunks[-1][1] <= PREFETCH_GAP and end - chunks[-1][0] <= PREFETCH_CHUNK:
            chunks[-1] = (chunks[-1][0], max(end, chunks[-1][1]))
        else:
            chunks.append((start, end))
    return chunks


def origin(blob: Blob) -> Blob:
    """The blob under any budget or prefetch wrappers: the same bytes at the same offsets."""
    while isinstance(blob, (BudgetBlob, PrefetchBlob)):
        blob = blob.inner
    return blob


class _RawBlobIO(io.RawIOBase):
    def __init__(self, blob: Blob) -> None:
        self._blob = blob
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._blob.size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._blob.read(self._pos, len(buffer))
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)


def open_blob(blob: Blob, buffer_size: int = READ_BUFFER) -> io.BufferedReader:
    """A seekable, buffered file object over a blob (for zipfile, tarfile, parsers)."""
    return io.BufferedReader(_RawBlobIO(blob), buffer_size=buffer_size)
