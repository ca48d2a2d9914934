"""Read zip members the way PyTorch's loader does.

``zipfile`` only parses the central directory. Member data is then located from the
local header's name/extra lengths and read directly, so CRC errors, the encrypted-flag bit
and a local file name that differs from the central directory are all ignored, exactly
as torch.load (miniz) ignores them. Only the bytes of members we look at are read.
"""

from __future__ import annotations

import struct
import zipfile
from dataclasses import dataclass
from typing import BinaryIO

from app.core.blobs import Blob, SliceBlob, open_blob
from app.core.scanners.stream_util import CorruptStream, decompressed

_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_SIG = b"PK\x03\x04"
STORED, DEFLATED = 0, 8


@dataclass(frozen=True)
class ZipMember:
    name: str
    header_offset: int
    method: int
    compressed_size: int
    size: int
    is_dir: bool


def read_directory(blob: Blob) -> list[ZipMember]:
    """Every central-directory entry, duplicates included (each is scanned)."""
    try:
        with zipfile.ZipFile(open_blob(blob)) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, struct.error, NotImplementedError,
            IndexError, OverflowError, KeyError) as exc:
        raise CorruptStream(f"unreadable zip central directory: {type(exc).__name__}: {exc}") from None
    return [
        ZipMember(i.filename, i.header_offset, i.compress_type, i.compress_size, i.file_size,
                  i.filename.endswith("/"))
        for i in infos
    ]


def data_offset(blob: Blob, member: ZipMember) -> int:
    header = blob.read(member.header_offset, _LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIG:
        raise CorruptStream(f"bad local header for {member.name!r}")
    fields = _LOCAL_HEADER.unpack(header)
    name_len, extra_len = int(fields[-2]), int(fields[-1])
    return member.header_offset + _LOCAL_HEADER.size + name_len + extra_len


def raw_blob(blob: Blob, member: ZipMember) -> Blob:
    """The member's compressed bytes as a window of the archive (no copy)."""
    return SliceBlob(blob, data_offset(blob, member), member.compressed_size)


def open_member(blob: Blob, member: ZipMember, limit: int) -> BinaryIO:
    """The member's content as a stream: seekable when stored, inflated lazily otherwise."""
    window = raw_blob(blob, member)
    if member.method == STORED:
        return open_blob(window)
    if member.method == DEFLATED:
        return decompressed(open_blob(window), "deflate", limit)
    raise CorruptStream(f"member {member.name!r} uses compression method {member.method}")
