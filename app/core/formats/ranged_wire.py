"""The protobuf wire format read through a ``ByteWindow``: a length-delimited field is read,
descended into, or jumped over, as the caller's schema walk decides.

``protobuf_wire`` reads a message already in memory; a model file can be gigabytes of tensor
bytes around a few megabytes of graph. Here a field is only a position and a length until the
walk asks for its bytes (``RangeField.data``) or its fields (``RangeMessage.nested``): a
``raw_data`` field the walk never asks for is never read. The same refusals as the in-memory
reader (``WireError``): a truncated varint, a field number 0, a length past its message, an
unmatched group end, reserved wire types, nesting deeper than protobuf's recursion limit. A
group (wire types 3/4, proto2) is what a protobuf parser keeps as an unknown field: skipped to
its matching end, never refused, so a file the runtime loads is never one hfvet stops reading. ``max_fields`` bounds the
whole walk (every field visited, at every depth), so a file of millions of tiny fields stops
at a limit instead of running for minutes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from app.core.formats.protobuf_wire import (
    DEFAULT_MAX_DEPTH,
    EGROUP,
    I32,
    I64,
    LEN,
    MAX_FIELD_NUMBER,
    MAX_VARINT_BYTES,
    SGROUP,
    VARINT,
    WireError,
)
from app.core.formats.window import ByteWindow
from app.core.limits import LimitExceeded

DEFAULT_MAX_FIELDS = 5_000_000
_FIXED_WIDTH = {I64: 8, I32: 4}


class Walk:
    """What one walk over one file shares: the window, and the fields visited so far."""

    def __init__(self, window: ByteWindow, max_fields: int = DEFAULT_MAX_FIELDS,
                 max_depth: int = DEFAULT_MAX_DEPTH) -> None:
        self.window = window
        self.max_fields = max_fields
        self.max_depth = max_depth
        self.fields = 0

    def top(self, start: int = 0, end: int | None = None) -> RangeMessage:
        return RangeMessage(self, start, self.window.size if end is None else end, 0)

    def count(self, at: int) -> None:
        self.fields += 1
        if self.fields > self.max_fields:
            raise LimitExceeded(f"more than {self.max_fields} protobuf fields (at byte {at})")


class RangeField(NamedTuple):
    number: int
    wire_type: int
    value: int  # the integer for VARINT/I64/I32; the payload length for LEN
    offset: int  # where the tag starts
    start: int  # where a LEN payload starts (-1 otherwise)

    def data(self, walk: Walk, cap: int) -> bytes:
        """A LEN payload's bytes, refusing more than ``cap`` (a name, a small table)."""
        if self.wire_type != LEN:
            raise WireError(f"field {self.number} at byte {self.offset} is not length-delimited")
        if self.value > cap:
            raise LimitExceeded(f"field {self.number} at byte {self.offset} is {self.value} bytes, "
                                f"over the {cap}-byte cap")
        return bytes(walk.window.view(self.start, self.value))

    def text(self, walk: Walk, cap: int = 64 * 1024) -> str:
        """A string. proto2 parsers (ONNX, Core ML, Paddle) accept invalid UTF-8, so bytes that
        do not decode are kept as surrogate escapes rather than refused."""
        return self.data(walk, cap).decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class RangeMessage:
    walk: Walk
    start: int
    end: int
    depth: int

    def fields(self) -> Iterator[RangeField]:
        position = self.start
        while position < self.end:
            self.walk.count(position)
            at = position
            tag, position = self._varint(position, "tag")
            number, wire_type = tag >> 3, tag & 7
            if not 0 < number <= MAX_FIELD_NUMBER:
                raise WireError(f"field number {number} at byte {at} is out of range")
            if wire_type == VARINT:
                value, position = self._varint(position, "varint")
                yield RangeField(number, wire_type, value, at, -1)
            elif wire_type == LEN:
                length, position = self._varint(position, "length")
                if length > self.end - position:
                    raise WireError(f"length {length} at byte {at} runs past the end of its message")
                yield RangeField(number, wire_type, length, at, position)
                position += length
            elif wire_type in _FIXED_WIDTH:
                width = _FIXED_WIDTH[wire_type]
                if position + width > self.end:
                    raise WireError(f"fixed-width value at byte {at} is truncated")
                value = int.from_bytes(self.walk.window.view(position, width), "little")
                yield RangeField(number, wire_type, value, at, -1)
                position += width
            elif wire_type == SGROUP:
                position = self._skip_group(number, position, at)
            elif wire_type == EGROUP:
                raise WireError(f"group end at byte {at} without a start")
            else:
                raise WireError(f"reserved wire type {wire_type} at byte {at}")

    def _skip_group(self, number: int, position: int, at: int) -> int:
        """The position after the group ``number`` that starts before ``position``."""
        open_groups = [number]
        while open_groups:
            if position >= self.end:
                raise WireError(f"group at byte {at} has no end")
            if len(open_groups) > self.walk.max_depth:
                raise WireError(f"groups nested more than {self.walk.max_depth} deep at byte {at}")
            self.walk.count(position)
            tag, position = self._varint(position, "tag")
            inner, wire_type = tag >> 3, tag & 7
            if not 0 < inner <= MAX_FIELD_NUMBER:
                raise WireError(f"field number {inner} at byte {position} is out of range")
            if wire_type == SGROUP:
                open_groups.append(inner)
            elif wire_type == EGROUP:
                if open_groups.pop() != inner:
                    raise WireError(f"group at byte {at} ends with another field's number")
            elif wire_type == VARINT:
                _value, position = self._varint(position, "varint")
            elif wire_type == LEN:
                length, position = self._varint(position, "length")
                position += length
            elif wire_type in _FIXED_WIDTH:
                position += _FIXED_WIDTH[wire_type]
            else:
                raise WireError(f"reserved wire type {wire_type} in the group at byte {at}")
        if position > self.end:
            raise WireError(f"group at byte {at} runs past the end of its message")
        return position

    def nested(self, field: RangeField) -> RangeMessage:
        if field.wire_type != LEN:
            raise WireError(f"field {field.number} at byte {field.offset} is not a message")
        if self.depth + 1 > self.walk.max_depth:
            raise WireError(f"messages nested more than {self.walk.max_depth} deep at byte {field.offset}")
        return RangeMessage(self.walk, field.start, field.start + field.value, self.depth + 1)

    def _varint(self, position: int, what: str) -> tuple[int, int]:
        window = self.walk.window
        at = position - window.start
        if position < self.end and 0 <= at < len(window.data) and window.data[at] < 0x80:
            return window.data[at], position + 1  # the common one-byte case, from the held window
        raw = window.view(position, min(MAX_VARINT_BYTES, self.end - position))
        result, shift = 0, 0
        for index, byte in enumerate(raw):
            if index == MAX_VARINT_BYTES - 1 and byte > 1:
                raise WireError(f"{what} at byte {position} overflows 64 bits")
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result, position + index + 1
            shift += 7
        raise WireError(f"truncated {what} at byte {position}")
