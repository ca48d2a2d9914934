"""Exact single-range ``Range: bytes=...`` handling for /resolve (RFC 9110 §14): the fixture hub's and the
Hub endpoint's (app.endpoint) one reading of the header."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPEC = re.compile(r"bytes=(\d*)-(\d*)")


class RangeNotSatisfiable(Exception):
    """Answered with 416 and ``Content-Range: bytes */size``."""


@dataclass(frozen=True)
class ByteRange:
    start: int
    end: int  # inclusive

    @property
    def length(self) -> int:
        return self.end - self.start + 1

    def content_range(self, size: int) -> str:
        return f"bytes {self.start}-{self.end}/{size}"


def parse_range(header: str | None, size: int) -> ByteRange | None:
    """The requested range clamped to the file, or None to send the whole file.

    A syntactically invalid header is ignored (whole file, as RFC 9110 allows); a range
    starting past the end, a zero-length suffix, or several ranges are refused with 416
    so a client never receives bytes it did not ask for.
    """
    if header is None:
        return None
    spec = header.strip().replace(" ", "")
    if "," in spec:
        raise RangeNotSatisfiable("multiple ranges are not supported")
    match = _SPEC.fullmatch(spec)
    if match is None or match.groups() == ("", ""):
        return None
    first, last = match.groups()
    if first == "":
        suffix = int(last)
        if suffix == 0 or size == 0:
            raise RangeNotSatisfiable(header)
        return ByteRange(max(0, size - suffix), size - 1)
    start = int(first)
    end = size - 1 if last == "" else int(last)
    if last != "" and end < start:
        return None  # invalid, so ignored
    if start >= size:
        raise RangeNotSatisfiable(header)
    return ByteRange(start, min(end, size - 1))
