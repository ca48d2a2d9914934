"""Per-file read cache so several scanners looking at one file fetch its bytes once."""

from __future__ import annotations

import threading

from app.core.manifest import Manifest
from app.core.ports import Source


class CachingSource:
    """Wraps a Source; keeps the ranges read from a file until ``forget(path)``."""

    def __init__(self, inner: Source) -> None:
        self._inner = inner
        self._segments: dict[str, list[tuple[int, bytes]]] = {}
        self._lock = threading.Lock()

    def manifest(self) -> Manifest:
        return self._inner.manifest()

    def size(self, path: str) -> int:
        return self._inner.size(path)

    @property
    def bytes_read(self) -> int:
        return self._inner.bytes_read

    def read(self, path: str, offset: int, length: int) -> bytes:
        hit = self._lookup(path, offset, length)
        if hit is not None:
            return hit
        data = self._inner.read(path, offset, length)
        with self._lock:
            self._segments.setdefault(path, []).append((offset, data))
        return data

    def forget(self, path: str) -> None:
        with self._lock:
            self._segments.pop(path, None)

    def _lookup(self, path: str, offset: int, length: int) -> bytes | None:
        with self._lock:
            segments = list(self._segments.get(path, ()))
        for start, data in segments:
            end = start + len(data)
            if start <= offset and offset + length <= end:
                return data[offset - start : offset - start + length]
        return None
