"""A bounded FlatBuffers reader: tables, vectors and strings at offsets, read through a window.

The layout (flatbuffers' internals doc): the buffer starts with a uoffset to the root table; a
table starts with an soffset back to its vtable; the vtable holds its own size, the table's size
and one uint16 offset per field (0: absent, use the default). Offsets to tables, vectors and
strings are uoffsets relative to where they are stored; a vector or string starts with a uint32
element count. Every position is checked against the buffer before it is read (``FlatError``);
a vector longer than the caller's cap is a ``LimitExceeded``, never a loop over garbage.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.formats.window import ByteWindow
from app.core.limits import LimitExceeded


class FlatError(Exception):
    """The bytes are not a well-formed flatbuffer where the walk looked."""


@dataclass(frozen=True)
class Buffer:
    window: ByteWindow

    def uint(self, position: int, width: int, signed: bool = False) -> int:
        if position < 0 or position + width > self.window.size:
            raise FlatError(f"{width}-byte value at {position} is outside the {self.window.size}-byte buffer")
        return int.from_bytes(self.window.view(position, width), "little", signed=signed)

    def root(self) -> Table:
        return self.table_at(self.uint(0, 4))

    def table_at(self, position: int) -> Table:
        vtable = position - self.uint(position, 4, signed=True)
        vtable_size = self.uint(vtable, 2)
        if vtable_size < 4 or vtable_size % 2:
            raise FlatError(f"table at {position} has a vtable of {vtable_size} bytes")
        self.uint(vtable, vtable_size)  # the whole vtable lies inside the buffer
        return Table(self, position, vtable, vtable_size)

    def indirect(self, position: int) -> int:
        """The position a uoffset stored at ``position`` points to."""
        return position + self.uint(position, 4)

    def vector(self, position: int, element: int, cap: int) -> tuple[int, int]:
        """(first element's position, count) of the vector at ``position``."""
        count = self.uint(position, 4)
        if count > cap:
            raise LimitExceeded(f"a vector of {count} elements at {position}, over the {cap}-element cap")
        start = position + 4
        if start + count * element > self.window.size:
            raise FlatError(f"vector of {count} elements at {position} runs past the buffer")
        return start, count

    def string(self, position: int, cap: int = 64 * 1024) -> str:
        start, length = self.vector(position, 1, cap)
        try:
            return bytes(self.window.view(start, length)).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FlatError(f"string at {position} is not UTF-8") from exc


@dataclass(frozen=True)
class Table:
    buffer: Buffer
    position: int
    vtable: int
    vtable_size: int

    def field(self, index: int) -> int:
        """The field's position in the table, or 0 when absent."""
        slot = 4 + 2 * index
        if slot + 2 > self.vtable_size:
            return 0
        offset = self.buffer.uint(self.vtable + slot, 2)
        return self.position + offset if offset else 0

    def scalar(self, index: int, width: int, default: int, signed: bool = False) -> int:
        at = self.field(index)
        return self.buffer.uint(at, width, signed) if at else default

    def string(self, index: int) -> str | None:
        at = self.field(index)
        return self.buffer.string(self.buffer.indirect(at)) if at else None

    def tables(self, index: int, cap: int) -> list[Table]:
        """The tables of a vector-of-tables field ([] when absent)."""
        at = self.field(index)
        if not at:
            return []
        start, count = self.buffer.vector(self.buffer.indirect(at), 4, cap)
        return [self.buffer.table_at(self.buffer.indirect(start + 4 * i)) for i in range(count)]
