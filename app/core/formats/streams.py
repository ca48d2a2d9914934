"""Byte plumbing for container readers: bounded decompression streams.

Everything stays lazy so a multi-GB file is read only where a loader would read it.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from collections.abc import Callable
from typing import BinaryIO

from app.core.formats.detect import Format
from app.core.limits import LimitExceeded, Limits

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


class _Counted(io.RawIOBase):
    """Counts the compressed bytes a decompressor pulls from its source (for the ratio check)."""

    def __init__(self, source: BinaryIO) -> None:
        self._source = source
        self.total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._source.read(len(buffer))
        self.total += len(data)
        buffer[: len(data)] = data
        return len(data)


class _Bounded(io.RawIOBase):
    """Passes reads through while the output stays within ``limits`` (size, and ratio to input)."""

    def __init__(self, inner: BinaryIO | io.BufferedIOBase, limits: Limits, what: str,
                 consumed: Callable[[], int] | None) -> None:
        self._inner = inner
        self._limits = limits
        self._what = what
        self._consumed = consumed
        self.total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        try:
            data = self._inner.read(min(len(buffer), CHUNK))  # judged chunk by chunk
        except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
            raise CorruptStream(f"bad {self._what} data: {exc}") from None
        self.total += len(data)
        consumed = self._consumed() if self._consumed else None
        self._limits.check_expansion(self.total, consumed, f"{self._what} stream")
        buffer[: len(data)] = data
        return len(data)


def decompressed(source: BinaryIO, fmt: str, limits: Limits) -> io.BufferedReader:
    """A forward-only stream of the payload of a compressed file, stopped at a decompression bomb."""
    # The decompressor objects live as long as the returned reader: no context manager.
    counted = _Counted(source)
    raw = io.BufferedReader(counted, buffer_size=CHUNK)
    inner: io.BufferedIOBase
    if fmt == Format.GZIP:
        inner = gzip.GzipFile(fileobj=raw, mode="rb")
    elif fmt == Format.BZ2:
        inner = bz2.BZ2File(raw, mode="rb")
    elif fmt == Format.XZ:
        inner = lzma.LZMAFile(raw, mode="rb")  # noqa: SIM115
    elif fmt == Format.LZMA:
        inner = lzma.LZMAFile(raw, mode="rb", format=lzma.FORMAT_ALONE)  # noqa: SIM115
    elif fmt == Format.ZLIB:
        inner = io.BufferedReader(_InflateRaw(raw, zlib.MAX_WBITS))
    elif fmt == "deflate":
        inner = io.BufferedReader(_InflateRaw(raw, -zlib.MAX_WBITS))
    else:
        raise ValueError(f"not a compression format: {fmt}")
    return io.BufferedReader(_Bounded(inner, limits, fmt, lambda: counted.total), buffer_size=CHUNK)


def read_capped(stream: BinaryIO, cap: int, what: str) -> bytearray:
    """The rest of ``stream``, in chunks (no second copy), refusing more than ``cap`` bytes."""
    out = bytearray()
    while chunk := stream.read(CHUNK):
        out += chunk
        if len(out) > cap:
            raise LimitExceeded(f"{what} larger than {cap} bytes")
    return out


def head_of(stream: BinaryIO, n: int) -> bytes:
    """Up to n bytes from the start of a fresh stream (for sniffing)."""
    out = b""
    while len(out) < n:
        data = stream.read(n - len(out))
        if not data:
            break
        out += data
    return out
