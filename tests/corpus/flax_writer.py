"""Flax's ``flax_model.msgpack``, written without flax or msgpack (read from flax/serialization.py).

``to_bytes(params)`` is ``msgpack.packb(state_dict, default=_msgpack_ext_pack, strict_types=True)``:
nested maps of parameter names whose leaves are ext type 1 (ndarray), each the msgpack of
``(shape, dtype name, raw C-order bytes)``. A map of n < 16 entries starts with byte ``0x80 | n``,
and those bytes are pickle opcodes: 0x80 PROTO, 0x81 NEWOBJ, 0x82-0x84 EXT1/EXT2/EXT4, 0x85-0x87
TUPLE1-3, 0x88/0x89 NEWTRUE/NEWFALSE... A BERT checkpoint ({"bert": ..., "cls": ...}) starts 0x82.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

NDARRAY_EXT = 1


def pack(value: Any) -> bytes:
    if isinstance(value, dict):
        head = bytes([0x80 | len(value)]) if len(value) < 16 else b"\xde" + struct.pack(">H", len(value))
        return head + b"".join(pack(k) + pack(v) for k, v in value.items())
    if isinstance(value, str):
        raw = value.encode()
        return (bytes([0xA0 | len(raw)]) if len(raw) < 32 else b"\xd9" + bytes([len(raw)])) + raw
    if isinstance(value, (list, tuple)):
        return bytes([0x90 | len(value)]) + b"".join(pack(v) for v in value)
    if isinstance(value, int) and 0 <= value < 128:
        return bytes([value])
    if isinstance(value, bytes):
        return b"\xc6" + struct.pack(">I", len(value)) + value  # bin32
    if isinstance(value, np.ndarray):
        inner = pack((list(value.shape), value.dtype.name, value.tobytes("C")))
        return b"\xc9" + struct.pack(">I", len(inner)) + bytes([NDARRAY_EXT]) + inner  # ext32
    raise TypeError(f"not packed here: {type(value).__name__}")


def _dense(n: int) -> dict[str, np.ndarray]:
    return {"kernel": np.ones((n, n), dtype="f4"), "bias": np.zeros(n, dtype="f4")}


def bert_params(top_keys: int = 2) -> bytes:
    """{"bert": {...}, "cls": {...}} (2 keys, 0x82), or 1, 3... top-level modules."""
    tops = ["bert", "cls", "qa_outputs", "classifier", "pooler"][:top_keys]
    return pack({name: {"dense": _dense(4), "LayerNorm": {"scale": np.ones(4, "f4")}} for name in tops})
