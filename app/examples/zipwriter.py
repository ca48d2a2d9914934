"""A minimal STORED zip writer laid out like PyTorch's (64-byte aligned member data).

Written by hand rather than with `zipfile` so that a member's data can be a sparse hole
(`add_hole`): local headers, central directory and EOCD are real bytes, the storages cost no
disk. ZIP64 records are written when sizes or offsets pass 4 GiB, as torch.save does.
"""

from __future__ import annotations

import functools
import struct
import zlib
from dataclasses import dataclass
from typing import BinaryIO

_U32_MAX = 0xFFFFFFFF
_ALIGN = 64  # torch aligns storage data so it can be memory-mapped
_PAD_ID = 0x4246  # "FB": the extra-field id torch uses for padding
_ZIP64_ID = 0x0001
_LOCAL_SIG = 0x04034B50
_CENTRAL_SIG = 0x02014B50
_EOCD_SIG = 0x06054B50
_ZIP64_EOCD_SIG = 0x06064B50
_ZIP64_LOCATOR_SIG = 0x07064B50
_CHUNK = 1 << 20


@dataclass(frozen=True)
class ZipMember:
    name: str
    header_offset: int  # where the local header starts
    data_offset: int  # where the member's data starts
    size: int
    crc: int

    @property
    def needs_zip64(self) -> bool:
        return self.size >= _U32_MAX or self.header_offset >= _U32_MAX


@functools.lru_cache(maxsize=256)
def crc32_of_zeros(length: int) -> int:
    """CRC-32 of `length` zero bytes, what a reader would compute over a sparse hole."""
    crc = 0
    zeros = bytes(_CHUNK)
    full, rest = divmod(length, _CHUNK)
    for _ in range(full):
        crc = zlib.crc32(zeros, crc)
    return zlib.crc32(zeros[:rest], crc)


class StoredZipWriter:
    """Append members to an open binary file, then `close()` writes the directory."""

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh
        self.members: list[ZipMember] = []

    def add_bytes(self, name: str, data: bytes) -> ZipMember:
        member = self._local_header(name, len(data), zlib.crc32(data))
        self._fh.write(data)
        return member

    def add_hole(self, name: str, size: int) -> ZipMember:
        """A member of `size` zero bytes that is never written (a hole once the file grows past it)."""
        member = self._local_header(name, size, crc32_of_zeros(size))
        self._fh.seek(size, 1)
        return member

    def close(self) -> None:
        cd_offset = self._fh.tell()
        for m in self.members:
            self._fh.write(_central_entry(m))
        cd_size = self._fh.tell() - cd_offset
        count = len(self.members)
        if cd_offset >= _U32_MAX or count >= 0xFFFF or any(m.needs_zip64 for m in self.members):
            self._write_zip64_end(count, cd_size, cd_offset)
        self._fh.write(struct.pack(
            "<IHHHHIIH", _EOCD_SIG, 0, 0, min(count, 0xFFFF), min(count, 0xFFFF),
            min(cd_size, _U32_MAX), min(cd_offset, _U32_MAX), 0,
        ))
        self._fh.truncate()

    def _local_header(self, name: str, size: int, crc: int) -> ZipMember:
        offset = self._fh.tell()
        encoded = name.encode()
        zip64 = struct.pack("<HHQQ", _ZIP64_ID, 16, size, size) if size >= _U32_MAX else b""
        unpadded = offset + 30 + len(encoded) + len(zip64) + 4
        pad = -unpadded % _ALIGN
        extra = zip64 + struct.pack("<HH", _PAD_ID, pad) + b"Z" * pad
        stored_size = _U32_MAX if zip64 else size
        self._fh.write(struct.pack(
            "<IHHHHHIIIHH", _LOCAL_SIG, _version(bool(zip64)), 0, 0, 0, 0x21,
            crc, stored_size, stored_size, len(encoded), len(extra),
        ))
        self._fh.write(encoded + extra)
        member = ZipMember(name, offset, self._fh.tell(), size, crc)
        self.members.append(member)
        return member

    def _write_zip64_end(self, count: int, cd_size: int, cd_offset: int) -> None:
        record_offset = self._fh.tell()
        self._fh.write(struct.pack(
            "<IQHHIIQQQQ", _ZIP64_EOCD_SIG, 44, 45, 45, 0, 0, count, count, cd_size, cd_offset,
        ))
        self._fh.write(struct.pack("<IIQI", _ZIP64_LOCATOR_SIG, 0, record_offset, 1))


def _version(zip64: bool) -> int:
    return 45 if zip64 else 20


def _central_entry(m: ZipMember) -> bytes:
    encoded = m.name.encode()
    big_size = m.size >= _U32_MAX
    big_offset = m.header_offset >= _U32_MAX
    fields = ([m.size, m.size] if big_size else []) + ([m.header_offset] if big_offset else [])
    extra = struct.pack(f"<HH{len(fields)}Q", _ZIP64_ID, 8 * len(fields), *fields) if fields else b""
    size = _U32_MAX if big_size else m.size
    offset = _U32_MAX if big_offset else m.header_offset
    version = _version(m.needs_zip64)
    return struct.pack(
        "<IHHHHHHIIIHHHHHII", _CENTRAL_SIG, version, version, 0, 0, 0, 0x21,
        m.crc, size, size, len(encoded), len(extra), 0, 0, 0, 0, offset,
    ) + encoded + extra
