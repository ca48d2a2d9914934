"""The bounded protobuf wire reader: every wire type, every malformed shape a clear WireError."""

from __future__ import annotations

import pytest

from app.core.formats.protobuf_wire import Message, WireError
from tests.unit.core.scanners.savedmodel_samples import int_field, len_field, tag, varint


def _fields(data: bytes) -> list[tuple[int, int, object]]:
    return [(f.number, f.wire_type, f.value if isinstance(f.value, int) else bytes(f.value))
            for f in Message.top(data).fields()]


def test_every_wire_type_tensorflow_uses() -> None:
    data = (int_field(1, 300) + len_field(2, "op") + tag(3, 1) + (7).to_bytes(8, "little")
            + tag(4, 5) + (9).to_bytes(4, "little") + int_field(5, (1 << 64) - 1))
    assert _fields(data) == [(1, 0, 300), (2, 2, b"op"), (3, 1, 7), (4, 5, 9), (5, 0, (1 << 64) - 1)]


def test_nested_messages_know_their_offsets_and_depth() -> None:
    inner = len_field(1, "x")
    data = int_field(1, 1) + len_field(2, inner)
    top = Message.top(data)
    outer = next(f for f in top.fields() if f.number == 2)
    child = top.nested(outer)
    assert child.depth == 1 and child.base == 4  # tag, varint, tag, length
    assert [f.offset for f in child.fields()] == [4]


def test_a_non_minimal_length_varint_still_gives_the_right_offset() -> None:
    data = tag(2, 2) + b"\x82\x00" + len_field(1, "")  # length 2 written in two bytes
    top = Message.top(data)
    [field] = list(top.fields())
    assert top.nested(field).base == 3 and bytes(field.payload()) == b"\x0a\x00"


@pytest.mark.parametrize(("data", "message"), [
    (b"\x08", "truncated varint at byte 1"),
    (b"\x88", "truncated tag at byte 0"),
    (b"\x08" + b"\xff" * 9 + b"\x02", "overflows 64 bits"),
    (b"\x00\x01", "field number 0 at byte 0"),
    (b"\x12\x05abc", "length 5 at byte 0 runs past the end"),
    (b"\x09\x01\x02", "fixed-width value at byte 0 is truncated"),
    (b"\x0b", "group (wire type 3)"),
    (b"\x0c", "group (wire type 4)"),
    (b"\x0e", "reserved wire type 6"),
    (b"\x0f", "reserved wire type 7"),
])
def test_malformed_bytes_raise_wire_error_with_the_offset(data: bytes, message: str) -> None:
    with pytest.raises(WireError, match=message.replace("(", r"\(").replace(")", r"\)")):
        list(Message.top(data).fields())


def test_nesting_is_capped() -> None:
    data = len_field(1, b"")
    for _ in range(5):
        data = len_field(1, data)
    message = Message.top(data, max_depth=3)
    with pytest.raises(WireError, match="nested more than 3 deep"):
        while True:
            message = message.nested(next(iter(message.fields())))


def test_a_varint_where_a_message_is_expected_is_an_error() -> None:
    [field] = list(Message.top(int_field(2, 7)).fields())
    with pytest.raises(WireError, match="expected a length-delimited value"):
        Message.top(b"").nested(field)


def test_strings_must_be_utf8() -> None:
    [field] = list(Message.top(len_field(2, b"\xc3\x28")).fields())
    with pytest.raises(WireError, match="not UTF-8"):
        field.text()


def test_varint_round_trip_at_the_edges() -> None:
    for value in (0, 1, 127, 128, 300, (1 << 63), (1 << 64) - 1):
        assert _fields(tag(1, 0) + varint(value)) == [(1, 0, value)]
