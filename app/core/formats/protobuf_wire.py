"""A bounded protobuf wire-format reader: fields of one message, never a generated class.

Protobuf messages are a flat run of (tag, value) records; a length-delimited value may be
a nested message, which the caller decides to descend into (``Message.nested``), so the
reader only ever knows what the caller's schema walk asks for. Limits: the message size a
caller accepts, and a nesting depth (``max_depth``, default protobuf's own recursion limit
of 100). Anything else a parser would reject, or that no TensorFlow proto uses, raises
``WireError`` with the offset: a truncated varint or length, a field number 0, a length
running past its message, a group (wire types 3 and 4), a reserved wire type.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

VARINT, I64, LEN, SGROUP, EGROUP, I32 = 0, 1, 2, 3, 4, 5
MAX_VARINT_BYTES = 10  # 64 bits in 7-bit groups
MAX_FIELD_NUMBER = (1 << 29) - 1
DEFAULT_MAX_DEPTH = 100  # protobuf's default recursion limit
_FIXED_WIDTH = {I64: 8, I32: 4}


class WireError(Exception):
    """The bytes are not a well-formed protobuf message (or use a feature we refuse)."""


class Field(NamedTuple):  # a tuple: cheap to make, there is one per field of a big graph
    number: int
    wire_type: int
    value: int | memoryview  # the integer for VARINT/I64/I32, the payload bytes for LEN
    offset: int  # where the tag starts in the whole buffer (for messages)
    payload_offset: int = -1  # where a LEN payload starts in the whole buffer

    def payload(self) -> memoryview:
        if not isinstance(self.value, memoryview):
            raise WireError(f"field {self.number} at byte {self.offset} has wire type {self.wire_type}, "
                            "expected a length-delimited value")
        return self.value

    def text(self) -> str:
        """A proto3 string: parsers reject invalid UTF-8, so do we."""
        try:
            return bytes(self.payload()).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WireError(f"field {self.number} at byte {self.offset} is not UTF-8") from exc


@dataclass(frozen=True)
class Message:
    """One message's bytes, ``depth`` levels below the top, at ``base`` in the whole buffer."""

    data: memoryview
    depth: int = 0
    base: int = 0
    max_depth: int = DEFAULT_MAX_DEPTH

    @classmethod
    def top(cls, data: bytes | memoryview, max_depth: int = DEFAULT_MAX_DEPTH) -> Message:
        return cls(memoryview(data), 0, 0, max_depth)

    def fields(self) -> Iterator[Field]:
        """Every field in order; raises WireError at the first malformed byte."""
        position, end = 0, len(self.data)
        while position < end:
            start = position
            tag, position = self._varint(position, "tag")
            number, wire_type = tag >> 3, tag & 7
            if not 0 < number <= MAX_FIELD_NUMBER:
                raise WireError(f"field number {number} at byte {self.base + start} is out of range")
            value_at = position
            value, position = self._value(wire_type, position, self.base + start)
            if isinstance(value, memoryview):
                value_at = position - len(value)
            yield Field(number, wire_type, value, self.base + start, self.base + value_at)

    def nested(self, field: Field) -> Message:
        """The LEN field's payload read as a message one level deeper."""
        if self.depth + 1 > self.max_depth:
            raise WireError(f"messages nested more than {self.max_depth} deep at byte {field.offset}")
        return Message(field.payload(), self.depth + 1, field.payload_offset, self.max_depth)

    def _value(self, wire_type: int, position: int, at: int) -> tuple[int | memoryview, int]:
        if wire_type == VARINT:
            return self._varint(position, "varint")
        if wire_type == LEN:
            length, position = self._varint(position, "length")
            if length > len(self.data) - position:
                raise WireError(f"length {length} at byte {at} runs past the end of its message")
            return self.data[position:position + length], position + length
        if wire_type in _FIXED_WIDTH:
            width = _FIXED_WIDTH[wire_type]
            if position + width > len(self.data):
                raise WireError(f"fixed-width value at byte {at} is truncated")
            return int.from_bytes(self.data[position:position + width], "little"), position + width
        if wire_type in (SGROUP, EGROUP):
            raise WireError(f"group (wire type {wire_type}) at byte {at}: no TensorFlow proto uses groups")
        raise WireError(f"reserved wire type {wire_type} at byte {at}")

    def _varint(self, position: int, what: str) -> tuple[int, int]:
        if position < len(self.data) and self.data[position] < 0x80:
            return self.data[position], position + 1  # the common one-byte case, fast
        result, shift = 0, 0
        for index in range(MAX_VARINT_BYTES):
            if position + index >= len(self.data):
                raise WireError(f"truncated {what} at byte {self.base + position}")
            byte = self.data[position + index]
            if index == MAX_VARINT_BYTES - 1 and byte > 1:
                raise WireError(f"{what} at byte {self.base + position} overflows 64 bits")
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result, position + index + 1
            shift += 7
        raise WireError(f"{what} at byte {self.base + position} is longer than {MAX_VARINT_BYTES} bytes")

