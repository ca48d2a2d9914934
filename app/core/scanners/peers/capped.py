"""Streams the peer engines read, capped: they parse whatever they are given, so nothing unbounded reaches them."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from app.core.limits import LimitExceeded


class CappedReader(io.RawIOBase):
    """A seekable view of a stream that ends (and records it) after ``cap`` bytes."""

    def __init__(self, inner: IO[bytes], cap: int) -> None:
        self._inner = inner
        self._cap = cap
        self.exceeded = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._inner.tell()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._inner.seek(offset, whence)

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        allowed = self._cap - self._inner.tell()
        if allowed <= 0:
            self.exceeded = self.exceeded or bool(self._inner.read(1))
            return 0
        data = self._inner.read(min(len(buffer), allowed))
        buffer[: len(data)] = data
        return len(data)


@contextmanager
def capped(inner: IO[bytes], cap: int) -> Iterator[IO[bytes]]:
    """``inner`` cut at ``cap`` bytes; leaving the block raises LimitExceeded if it was cut."""
    raw = CappedReader(inner, cap)
    try:
        yield io.BufferedReader(raw)
    finally:
        if raw.exceeded:
            raise LimitExceeded(f"a stream is longer than {cap} bytes")


@contextmanager
def open_capped_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> Iterator[IO[bytes]]:
    # zipfile never yields more than the declared size; ``cap`` bounds decompression bombs.
    with zf.open(info) as raw, capped(raw, cap) as stream:
        yield stream
