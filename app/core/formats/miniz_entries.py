"""One central directory entry as PyTorch's miniz reads it (``mz_zip_reader_read_central_dir``'s checks,
``mz_zip_file_stat_internal``'s values), and the errors of the miniz reading; the archive around it is
``miniz_zip``'s, the lookup order ``miniz_sort``'s."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import NamedTuple

_CENTRAL_SIG = 0x02014B50
CENTRAL_SIZE = 46
_LOCAL_SIZE = 30
U32 = 0xFFFFFFFF
_ZIP64_EXTRA = 0x0001
_MASKED_LOCAL_DIR = 8192
_ENCRYPTED_OR_PATCH = 1 | 32 | 64  # extraction refuses these (UNSUPPORTED_ENCRYPTION)
_DOS_DIRECTORY = 0x10
STORED, DEFLATED = 0, 8


class MinizError(Exception):
    """miniz (so torch.load) refuses the archive."""


class MinizLimit(MinizError):
    """The archive is past what hfvet reads in this second reading."""


@dataclass(frozen=True)
class MinizEntry:
    index: int  # position in the central directory
    name: bytes
    flags: int
    method: int
    crc: int
    compressed_size: int
    size: int
    header_offset: int
    is_dir: bool
    stat_error: str | None = None  # mz_zip_reader_file_stat fails: torch cannot read this record

    @property
    def extractable(self) -> bool:
        """What ``mz_zip_reader_extract_to_mem`` would accept (method, encryption, stat)."""
        return (self.stat_error is None and self.method in (STORED, DEFLATED)
                and not self.flags & _ENCRYPTED_OR_PATCH)

    @property
    def bytes_read(self) -> int:
        """How many bytes from the data start torch reads: stored for the uncompressed size."""
        if self.is_dir or self.compressed_size == 0:
            return 0
        return self.size if self.method == STORED else self.compressed_size


# A central header's fields, the version fields, date and internal attributes skipped.
_CENTRAL = struct.Struct("<8x3H2x3L4H2x2L")


class _Header(NamedTuple):
    """One central directory header, its fields as the format lays them out."""

    flags: int
    method: int
    time: int
    crc: int
    compressed: int
    size: int
    name_len: int
    extra_len: int
    comment_len: int
    disk: int
    external: int
    header_offset: int

    @staticmethod
    def parse(directory: bytes, at: int) -> _Header:
        return _Header._make(_CENTRAL.unpack_from(directory, at))


def central_entry(directory: bytes, at: int, index: int, this_disk: int, archive_size: int) -> tuple[MinizEntry, int]:
    """One central header: ``read_central_dir``'s checks, then ``file_stat_internal``'s values."""
    remaining = len(directory) - at
    if remaining < CENTRAL_SIZE or le32(directory, at) != _CENTRAL_SIG:
        raise MinizError(f"central directory entry {index}: bad signature")
    header = _Header.parse(directory, at)
    name_at = at + CENTRAL_SIZE
    extra = directory[name_at + header.name_len : name_at + header.name_len + header.extra_len]
    _init_checks(header, extra, index, this_disk, archive_size)
    total = CENTRAL_SIZE + header.name_len + header.extra_len + header.comment_len
    if total > remaining:
        raise MinizError(f"central directory entry {index} runs past the directory")
    name = directory[name_at : name_at + header.name_len]
    is_dir = name.endswith(b"/") or bool(header.external & _DOS_DIRECTORY)
    size, compressed, offset = header.size, header.compressed, header.header_offset
    error = None
    try:
        size, compressed, offset = _stat_zip64(extra, size, compressed, offset)
    except MinizError as exc:
        error = str(exc)
    entry = MinizEntry(index, name, header.flags, header.method, header.crc, compressed, size, offset, is_dir, error)
    return entry, total


def _init_checks(header: _Header, extra: bytes, index: int, this_disk: int, archive_size: int) -> None:
    """The sanity checks ``mz_zip_reader_read_central_dir`` makes on each entry (any failure: no archive)."""
    size, compressed, offset = header.size, header.compressed, header.header_offset
    if extra and max(compressed, size, offset) == U32:
        size, compressed, offset = _init_zip64(extra, (size, compressed, offset))
    # MZ_READ_LE32 at the method offset: method and time together, so only a stored entry with a
    # zero time must have equal sizes; with any other time a stored entry is read for its "size".
    method_and_time = header.method | header.time << 16
    if compressed != U32 and size != U32 and (
            (method_and_time == 0 and size != compressed) or (size and not compressed)):
        raise MinizError(f"central directory entry {index}: stored sizes disagree")
    if header.disk == 0xFFFF or (header.disk != this_disk and header.disk != 1):
        raise MinizError(f"central directory entry {index}: multi-disk")
    if compressed != U32 and offset + _LOCAL_SIZE + compressed > archive_size:
        raise MinizError(f"central directory entry {index}: data past the end of the file")
    if header.flags & _MASKED_LOCAL_DIR:
        raise MinizError(f"central directory entry {index}: masked local headers")


def _init_zip64(extra: bytes, values: tuple[int, int, int]) -> tuple[int, int, int]:
    """PyTorch's copy of ``read_central_dir``: the zip64 values it validates with (read past the field)."""
    field = _zip64_field(extra)
    size, compressed, header_offset = values
    if field is not None:
        offset = field + 4
        remaining = len(extra) - offset
        if size == U32 and remaining >= 8:
            size, offset, remaining = le64(extra, offset), offset + 8, remaining - 8
        if compressed == U32 and remaining >= 8:
            compressed, offset, remaining = le64(extra, offset), offset + 8, remaining - 8
        if header_offset == U32 and remaining >= 8:
            header_offset = le64(extra, offset)
    return size, compressed, header_offset


def _stat_zip64(extra: bytes, size: int, compressed: int, header_offset: int) -> tuple[int, int, int]:
    """``mz_zip_file_stat_internal``: the first zip64 extra field, read only when a value is 0xFFFFFFFF."""
    if max(size, compressed, header_offset) != U32:
        return size, compressed, header_offset
    field = _zip64_field(extra)
    if field is None:
        return size, compressed, header_offset
    (field_size,) = struct.unpack_from("<H", extra, field + 2)
    data = extra[field + 4 : field + 4 + field_size]
    return _zip64_values(data, size, compressed, header_offset)


def _zip64_field(extra: bytes) -> int | None:
    """Where the first zip64 extra field's header starts, walking the fields as miniz does (each one
    checked to fit); None when there is none."""
    offset, remaining = 0, len(extra)
    while remaining:
        if remaining < 4:
            raise MinizError("corrupt extra field")
        field_id, field_size = struct.unpack_from("<2H", extra, offset)
        if field_size + 4 > remaining:
            raise MinizError("corrupt extra field")
        if field_id == _ZIP64_EXTRA:
            return offset
        offset += 4 + field_size
        remaining -= 4 + field_size
    return None


def _zip64_values(data: bytes, size: int, compressed: int, header_offset: int) -> tuple[int, int, int]:
    values = [size, compressed, header_offset]
    at = 0
    for i in range(3):
        if values[i] == U32:
            if len(data) - at < 8:
                raise MinizError("zip64 extra field too short")
            values[i] = le64(data, at)
            at += 8
    return values[0], values[1], values[2]


def le32(data: bytes, at: int) -> int:
    return int(struct.unpack_from("<L", data, at)[0])


def le64(data: bytes, at: int) -> int:
    return int(struct.unpack_from("<Q", data, at)[0])
