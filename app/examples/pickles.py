"""Pickle streams built opcode by opcode, the way torch.save lays them out.

Nothing here ever unpickles: the streams are bytes for scanners to read. Hostile samples carry
harmless payload strings ("echo pwned") and are only written to disk for static inspection.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

TORCH_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
TORCH_LEGACY_PROTOCOL = 1001

# torch storage class per safetensors-style dtype name
STORAGE_TYPES = {
    "F32": "FloatStorage", "F16": "HalfStorage", "BF16": "BFloat16Storage",
    "U8": "ByteStorage", "I8": "CharStorage", "I32": "IntStorage", "I64": "LongStorage",
}


class PickleWriter:
    """Append pickle opcodes (protocol 2, as torch.save uses) to a byte buffer."""

    def __init__(self) -> None:
        self._out = bytearray(b"\x80\x02")  # PROTO 2

    def getvalue(self) -> bytes:
        return bytes(self._out)

    def op(self, code: bytes) -> PickleWriter:
        self._out += code
        return self

    def global_(self, module: str, name: str) -> PickleWriter:
        return self.op(b"c" + f"{module}\n{name}\n".encode())

    def mark(self) -> PickleWriter:
        return self.op(b"(")

    def string(self, text: str) -> PickleWriter:
        data = text.encode()
        return self.op(b"X" + struct.pack("<I", len(data)) + data)  # BINUNICODE

    def integer(self, value: int) -> PickleWriter:
        if 0 <= value < 256:
            return self.op(b"K" + bytes([value]))  # BININT1
        if 0 <= value < 65536:
            return self.op(b"M" + struct.pack("<H", value))  # BININT2
        if -(2**31) <= value < 2**31:
            return self.op(b"J" + struct.pack("<i", value))  # BININT
        data = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
        return self.op(b"\x8a" + bytes([len(data)]) + data)  # LONG1

    def boolean(self, value: bool) -> PickleWriter:
        return self.op(b"\x88" if value else b"\x89")

    def none(self) -> PickleWriter:
        return self.op(b"N")

    def int_tuple(self, values: Sequence[int]) -> PickleWriter:
        if not values:
            return self.op(b")")
        self.mark()
        for v in values:
            self.integer(v)
        return self.op(b"t")

    def call(self, module: str, name: str, arg: str) -> PickleWriter:
        """module.name(arg) via GLOBAL + TUPLE1 + REDUCE."""
        return self.global_(module, name).string(arg).op(b"\x85R")

    def empty_ordered_dict(self) -> PickleWriter:
        return self.global_("collections", "OrderedDict").op(b")R")

    def stop(self) -> bytes:
        return self.op(b".").getvalue()


@dataclass(frozen=True)
class TorchTensor:
    """One tensor of a state dict, backed by its own storage `key`."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    key: str

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


def _strides(shape: tuple[int, ...]) -> list[int]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return list(reversed(strides))


def _tensor(w: PickleWriter, t: TorchTensor, legacy: bool) -> None:
    # torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)
    w.global_("torch._utils", "_rebuild_tensor_v2").mark()
    w.mark().string("storage").global_("torch", STORAGE_TYPES[t.dtype]).string(t.key).string("cpu")
    w.integer(t.numel)
    if legacy:
        w.none()  # view metadata, only in the legacy format
    w.op(b"t").op(b"Q")  # TUPLE, BINPERSID
    w.integer(0).int_tuple(t.shape).int_tuple(_strides(t.shape)).boolean(False)
    w.empty_ordered_dict().op(b"t").op(b"R")


def state_dict_pickle(
    tensors: Sequence[TorchTensor],
    *,
    legacy: bool = False,
    payload: tuple[str, str, str] | None = None,
) -> bytes:
    """An OrderedDict of tensors; `payload` = (module, name, arg) adds a hostile REDUCE entry."""
    w = PickleWriter().empty_ordered_dict().mark()
    for i, t in enumerate(tensors):
        w.string(t.name)
        _tensor(w, t, legacy)
        if payload and i == len(tensors) // 2:
            w.string("_extra_state")  # hidden in the middle, where a skim would not look
            w.call(*payload)
    w.op(b"u")  # SETITEMS
    return w.stop()


def legacy_preamble() -> list[bytes]:
    """The three small pickles that open a legacy (pre-zip) torch file."""
    magic = PickleWriter().integer(TORCH_LEGACY_MAGIC).stop()
    protocol = PickleWriter().integer(TORCH_LEGACY_PROTOCOL).stop()
    info = PickleWriter().op(b"}").mark()
    info.string("protocol_version").integer(TORCH_LEGACY_PROTOCOL)
    info.string("little_endian").boolean(True)
    info.string("type_sizes").op(b"}").mark()
    for name, size in (("short", 2), ("int", 4), ("long", 4)):
        info.string(name).integer(size)
    info.op(b"u").op(b"u")
    return [magic, protocol, info.stop()]


def storage_keys_pickle(keys: Sequence[str]) -> bytes:
    w = PickleWriter().op(b"]").mark()
    for key in keys:
        w.string(key)
    return w.op(b"e").stop()  # APPENDS
