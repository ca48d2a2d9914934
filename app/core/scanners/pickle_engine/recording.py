"""Forward-only streams read again. ``replayed`` puts bytes already read (a sniffed head) back in
front of the rest. A ``Recorder`` passes the first reading through and keeps a copy (in memory up
to ``SMALL_BUFFER``, on disk beyond, at most ``cap`` bytes), then replays it followed by the rest
of the source: ``OpReader.rewind`` uses it for joblib's second reading of a decompressed stream.
"""

from __future__ import annotations

import io
import tempfile
from typing import BinaryIO

from app.core.limits import LimitExceeded
from app.core.membudget import SMALL_BUFFER


class Recorder(io.RawIOBase):
    """Passes reads through and keeps a copy of them, for a second reading of the same bytes."""

    def __init__(self, source: BinaryIO, already: bytes, cap: int) -> None:
        self._source = source
        self._copy = tempfile.SpooledTemporaryFile(max_size=SMALL_BUFFER)  # noqa: SIM115 - lives with the reader
        self._copy.write(already)
        self._kept = len(already)
        self._cap = cap

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        data = self._source.read(n)
        self._kept += len(data)
        if self._kept <= self._cap:
            self._copy.write(data)
        return data

    def readline(self, limit: int = -1) -> bytes:  # type: ignore[override]
        line = self._source.readline(limit)
        self._kept += len(line)
        if self._kept <= self._cap:
            self._copy.write(line)
        return line

    def discard(self) -> None:
        self._copy.close()

    def replay(self) -> BinaryIO:
        """The recorded bytes, then the rest of the source, as one stream."""
        if self._kept > self._cap:
            raise LimitExceeded(f"the second reading needs more than {self._cap} bytes read again")
        self._copy.seek(0)
        return io.BufferedReader(_Chain(self._copy, self._source))  # type: ignore[arg-type]


class _Chain(io.RawIOBase):
    def __init__(self, first: BinaryIO, second: BinaryIO) -> None:
        self._parts = [first, second]

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while self._parts:
            data = self._parts[0].read(len(buffer))
            if data:
                buffer[: len(data)] = data
                return len(data)
            self._parts.pop(0)
        return 0


def replayed(head: bytes, rest: BinaryIO) -> BinaryIO:
    """A stream that yields ``head`` (bytes already read from ``rest``) again, then the remainder."""
    return io.BufferedReader(_HeadThenRest(head, rest))


class _HeadThenRest(io.RawIOBase):
    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head, self._rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n], self._head = self._head[:n], self._head[n:]
            return n
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
