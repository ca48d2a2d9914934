"""Write files in the real safetensors layout: u64 LE header length, JSON header, raw data.

Small example files get deterministic filler bytes; benchmark files get a sparse hole instead
of data (`sparse=True`), so a multi-GB shard costs only its header on disk.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

DTYPE_BYTES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1,
    "U16": 2, "I16": 2, "F16": 2, "BF16": 2,
    "U32": 4, "I32": 4, "F32": 4,
    "U64": 8, "I64": 8, "F64": 8,
}


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: str
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        return DTYPE_BYTES[self.dtype] * math.prod(self.shape)


@dataclass(frozen=True)
class SafetensorsLayout:
    header_length: int  # the u64 at offset 0: JSON length including padding
    data_length: int

    @property
    def file_size(self) -> int:
        return 8 + self.header_length + self.data_length


def encode_header(tensors: Iterable[TensorSpec], metadata: Mapping[str, str] | None = None) -> bytes:
    """The JSON header, space-padded to a multiple of 8 like the reference writer."""
    header: dict[str, object] = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    offset = 0
    for t in tensors:
        end = offset + t.nbytes
        header[t.name] = {"dtype": t.dtype, "shape": list(t.shape), "data_offsets": [offset, end]}
        offset = end
    raw = json.dumps(header, separators=(",", ":")).encode()
    return raw + b" " * (-len(raw) % 8)


def filler(name: str, length: int) -> bytes:
    """Deterministic bytes standing in for tensor data (the same on every run)."""
    return hashlib.shake_128(name.encode()).digest(length) if length else b""


def write_safetensors(
    path: Path,
    tensors: list[TensorSpec],
    metadata: Mapping[str, str] | None = None,
    *,
    sparse: bool = False,
) -> SafetensorsLayout:
    header = encode_header(tensors, metadata)
    layout = SafetensorsLayout(len(header), sum(t.nbytes for t in tensors))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        fh.write(struct.pack("<Q", len(header)))
        fh.write(header)
        if sparse:
            fh.truncate(layout.file_size)  # the data is a hole: no disk blocks
        else:
            for t in tensors:
                fh.write(filler(t.name, t.nbytes))
    return layout


def shard_name(index: int, count: int) -> str:
    return f"model-{index:05d}-of-{count:05d}.safetensors"


def write_sharded(
    repo: Path,
    shards: list[list[TensorSpec]],
    metadata: Mapping[str, str] | None = None,
    *,
    sparse: bool = False,
) -> dict[str, SafetensorsLayout]:
    """Write `model-0000N-of-0000M.safetensors` shards plus `model.safetensors.index.json`."""
    layouts: dict[str, SafetensorsLayout] = {}
    weight_map: dict[str, str] = {}
    for i, tensors in enumerate(shards, start=1):
        name = shard_name(i, len(shards))
        layouts[name] = write_safetensors(repo / name, tensors, metadata, sparse=sparse)
        weight_map.update((t.name, name) for t in tensors)
    total = sum(layout.data_length for layout in layouts.values())
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (repo / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
    return layouts
