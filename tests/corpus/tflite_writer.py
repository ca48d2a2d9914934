"""TFLite models written byte by byte (a flatbuffer with identifier TFL3), for tests: no tflite package.

Only what the scanner reads: Model.version, operator_codes (builtin or custom), one empty
subgraph and one empty buffer. Children are written after their parent, so every uoffset
points forward, as flatbuffers requires. Field numbers: tensorflow/lite/schema/schema.fbs.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

CUSTOM = 32
CONV_2D, RELU, FULLY_CONNECTED, SOFTMAX = 3, 19, 9, 25


class _Writer:
    def __init__(self) -> None:
        self.out = bytearray(b"\0\0\0\0TFL3")

    def _pad(self) -> None:
        while len(self.out) % 4:
            self.out.append(0)

    def table(self, scalars: dict[int, int], refs: dict[int, Callable[[], int]] | None = None) -> int:
        refs = refs or {}
        count = max([*scalars, *refs], default=-1) + 1
        self._pad()
        vtable = len(self.out)
        self.out += struct.pack("<HH", 4 + 2 * count, 4 + 4 * count)
        self.out += b"".join(struct.pack("<H", 4 + 4 * i if i in scalars or i in refs else 0) for i in range(count))
        self._pad()
        table = len(self.out)
        self.out += struct.pack("<i", table - vtable)
        self.out += b"".join(struct.pack("<I", scalars.get(i, 0) & 0xFFFFFFFF) for i in range(count))
        for index, build in refs.items():
            slot = table + 4 + 4 * index
            struct.pack_into("<I", self.out, slot, build() - slot)
        return table

    def string(self, text: str) -> int:
        self._pad()
        at = len(self.out)
        data = text.encode()
        self.out += struct.pack("<I", len(data)) + data + b"\0"
        return at

    def vector(self, builders: list[Callable[[], int]]) -> int:
        self._pad()
        at = len(self.out)
        self.out += struct.pack("<I", len(builders)) + b"\0" * (4 * len(builders))
        for index, build in enumerate(builders):
            slot = at + 4 + 4 * index
            struct.pack_into("<I", self.out, slot, build() - slot)
        return at


def model(ops: list[int | str], version: int = 3, weights: bytes = b"") -> bytes:
    """A model whose operator codes are ``ops``: an int is a builtin code, a str a custom op's name."""
    writer = _Writer()

    def code(op: int | str) -> Callable[[], int]:
        if isinstance(op, str):
            return lambda: writer.table({0: CUSTOM, 2: 1, 3: CUSTOM}, {1: lambda: writer.string(op)})
        return lambda: writer.table({0: min(op, 127), 2: 1, 3: op})

    root = writer.table({0: version}, {
        1: lambda: writer.vector([code(op) for op in ops]),
        2: lambda: writer.vector([lambda: writer.table({})]),
        4: lambda: writer.vector([lambda: writer.table({})]),
    })
    struct.pack_into("<I", writer.out, 0, root)
    return bytes(writer.out) + weights
