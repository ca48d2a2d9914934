"""PyTorch checkpoints in both on-disk formats, small (real bytes) or big (sparse holes).

- zip format (torch >= 1.6): `<archive>/data.pkl`, `<archive>/byteorder`, `<archive>/data/<key>`,
  `<archive>/version`, `<archive>/.data/serialization_id`, all STORED.
- legacy format: pickles (magic number, protocol, sys_info, the state dict, storage keys), then
  for each storage a u64 element count and its raw bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from app.examples.pickles import TorchTensor, legacy_preamble, state_dict_pickle, storage_keys_pickle
from app.examples.safetensors_writer import DTYPE_BYTES, filler
from app.examples.zipwriter import StoredZipWriter, ZipMember

Payload = tuple[str, str, str]


@dataclass(frozen=True)
class TorchZipLayout:
    members: tuple[ZipMember, ...]
    directory_bytes: int  # central directory + (zip64) end records, at the end of the file
    file_size: int

    def member(self, name: str) -> ZipMember:
        return next(m for m in self.members if m.name == name)


@dataclass(frozen=True)
class LegacyLayout:
    pickles_length: int  # the leading pickles, up to the first storage
    file_size: int


def storage_bytes(t: TorchTensor) -> int:
    return DTYPE_BYTES[t.dtype] * t.numel


def write_torch_zip(
    path: Path,
    tensors: Sequence[TorchTensor],
    *,
    archive: str = "archive",
    sparse: bool = False,
    payload: Payload | None = None,
) -> TorchZipLayout:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        zw = StoredZipWriter(fh)
        zw.add_bytes(f"{archive}/data.pkl", state_dict_pickle(tensors, payload=payload))
        zw.add_bytes(f"{archive}/byteorder", b"little")
        for t in tensors:
            name = f"{archive}/data/{t.key}"
            if sparse:
                zw.add_hole(name, storage_bytes(t))
            else:
                zw.add_bytes(name, filler(t.name, storage_bytes(t)))
        zw.add_bytes(f"{archive}/version", b"3\n")
        zw.add_bytes(f"{archive}/.data/serialization_id", b"1" * 40)
        end_of_data = fh.tell()
        zw.close()
        size = fh.tell()
    return TorchZipLayout(tuple(zw.members), size - end_of_data, size)


def write_torch_legacy(
    path: Path,
    tensors: Sequence[TorchTensor],
    *,
    sparse: bool = False,
    payload: Payload | None = None,
) -> LegacyLayout:
    path.parent.mkdir(parents=True, exist_ok=True)
    pickles = [
        *legacy_preamble(),
        state_dict_pickle(tensors, legacy=True, payload=payload),
        storage_keys_pickle([t.key for t in tensors]),
    ]
    with path.open("wb") as fh:
        for p in pickles:
            fh.write(p)
        for t in tensors:
            fh.write(struct.pack("<Q", t.numel))
            if sparse:
                fh.seek(storage_bytes(t), 1)
            else:
                fh.write(filler(t.name, storage_bytes(t)))
        size = fh.tell()
        fh.truncate(size)  # materialise a trailing hole
    return LegacyLayout(sum(len(p) for p in pickles), size)
