"""Blob views shared by the container scanners: a window into a blob and a read budget."""

from __future__ import annotations

from app.core.blobs import Blob


class LimitExceeded(Exception):
    """A ``Limits`` bound was hit; scanners turn it into a ``limit-exceeded`` finding."""


class SliceBlob:
    """Bytes ``[start, start + length)`` of another blob, read lazily through it."""

    def __init__(self, inner: Blob, start: int, length: int) -> None:
        self._inner = inner
        self._start = start
        self._size = max(0, min(length, inner.size - start))

    @property
    def size(self) -> int:
        return self._size

    def read(self, offset: int, length: int) -> bytes:
        length = max(0, min(length, self._size - offset))
        if length == 0 or offset < 0:
            return b""
        return self._inner.read(self._start + offset, length)


class BudgetBlob:
    """Counts the bytes a scanner reads from one file and stops it past ``budget``."""

    def __init__(self, inner: Blob, budget: int) -> None:
        self._inner = inner
        self._budget = budget
        self.bytes_read = 0

    @property
    def size(self) -> int:
        return self._inner.size

    def read(self, offset: int, length: int) -> bytes:
        data = self._inner.read(offset, length)
        self.bytes_read += len(data)
        if self.bytes_read > self._budget:
            raise LimitExceeded(f"read more than {self._budget} bytes from the file")
        return data
