"""Byte plumbing for container readers: bounded decompression streams.

Everything stays lazy so a multi-GB file is read only where a loader would read it.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from typing import BinaryIO

from app.core.formats.detect import Format
from app.core.limits import LimitExceeded

CHUNK = 256 * 1024


class CorruptStream(Exception):
    """Compressed or archived data that a loader could not decode either."""


class _InflateRaw(io.RawIOBase):
    """Decompresses a zlib/deflate stream from a file object, on demand."""

    def __init__(self, source: BinaryIO, wbits: int) -> None:
        self._source = source
        self._d = zlib.decompressobj(wbits)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        want = len(buffer)
        while True:
            if self._d.eof:
                return 0
            data = self._d.unconsumed_tail or self._source.read(CHUNK)
            if not data:
                raise CorruptStream("compressed stream ends early")
            try:
                out = self._d.decompress(data, want)
            except zlib.error as exc:
                raise CorruptStream(f"bad deflate data: {exc}") from None
            if out:
                buffer[: len(out)] = out
                return len(out)


class _Bounded(io.RawIOBase):
    """Passes reads through until ``limit`` bytes, then raises LimitExceeded."""

    def __init__(self, inner: BinaryIO | io.BufferedIOBase, limit: int, what: str) -> None:
        self._inner = inner
        self._limit = limit
        self._what = what
        self.total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        try:
            data = self._inner.read(len(buffer))
        except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
            raise CorruptStream(f"bad {self._what} data: {exc}") from None
        self.total += len(data)
        if self.total > self._limit:
            raise LimitExceeded(f"{self._what} decompresses to more than {self._limit} bytes")
        buffer[: len(data)] = data
        return len(data)


def bounded(stream: BinaryIO | io.BufferedIOBase, limit: int, what: str) -> io.BufferedReader:
    return io.BufferedReader(_Bounded(stream, limit, what), buffer_size=CHUNK)


def decompressed(source: BinaryIO, fmt: str, limit: int) -> io.BufferedReader:
    """A forward-only, size-bounded stream of the payload of a compressed file."""
    # The decompressor objects live as long as the returned reader: no context manager.
    inner: io.BufferedIOBase
    if fmt == Format.GZIP:
        inner = gzip.GzipFile(fileobj=source, mode="rb")
    elif fmt == Format.BZ2:
        inner = bz2.BZ2File(source, mode="rb")
    elif fmt == Format.XZ:
        inner = lzma.LZMAFile(source, mode="rb")  # noqa: SIM115
    elif fmt == Format.ZLIB:
        inner = io.BufferedReader(_InflateRaw(source, zlib.MAX_WBITS))
    elif fmt == "deflate":
        inner = io.BufferedReader(_InflateRaw(source, -zlib.MAX_WBITS))
    else:
        raise ValueError(f"not a compression format: {fmt}")
    return bounded(inner, limit, fmt)


def head_of(stream: BinaryIO, n: int) -> bytes:
    """Up to n bytes from the start of a fresh stream (for sniffing)."""
    out = b""
    while len(out) < n:
        data = stream.read(n - len(out))
        if not data:
            break
        out += data
    return out
