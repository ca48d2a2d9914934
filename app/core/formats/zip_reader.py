"""hfvet's one reader of zip archives, reading them the way PyTorch's loader does.

``zipfile`` only parses the central directory. Member data is then located from the
local header's name/extra lengths and read directly, so CRC errors, the encrypted-flag bit
and a local file name that differs from the central directory are all ignored, exactly
as torch.load (miniz) ignores them. Only the bytes of members we look at are read, in
batches (``prefetch``). Callers that must report such tricks (the binary scanner, which
also reads every entry's local header to compare names) get the raw facts here too.
"""

from __future__ import annotations

import bisect
import re
import struct
import threading
import weakref
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, BinaryIO

from app.core.formats.blobs import PrefetchBlob, SliceBlob, open_blob, origin
from app.core.formats.streams import CorruptStream, decompressed
from app.core.limits import Limits
from app.core.ports import Blob

_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_SIG = b"PK\x03\x04"
_UTF8_NAME = 0x800
STORED, DEFLATED = 0, 8
ENCRYPTED = 0x1
_EXTRA_ALLOWANCE = 64  # typical local extra fields (zip64, timestamps, torch's alignment padding)
# <top>/data/<n> records of a torch zip hold raw storage bytes: torch never unpickles them.
TORCH_STORAGE = re.compile(r"(^|/)data/\d+$")
# Parsed directories, kept only while the file's blob is alive (one scan of one file).
_DIRECTORIES: weakref.WeakKeyDictionary[Blob, _Directory] = weakref.WeakKeyDictionary()
_DIRECTORIES_LOCK = threading.Lock()


@dataclass(frozen=True)
class ZipMember:
    name: str
    header_offset: int
    method: int
    compressed_size: int
    size: int
    is_dir: bool
    raw_name: str  # as the central directory spells it, before zipfile's clean-up of ``name``
    flags: int
    crc: int = 0

    @property
    def raw_bytes(self) -> bytes:
        """The name's bytes in the central directory (zipfile decodes them by the UTF-8 flag)."""
        return self.raw_name.encode("utf-8" if self.flags & _UTF8_NAME else "cp437")


@dataclass(frozen=True)
class LocalHeader:
    flags: int
    name_offset: int
    name_length: int
    data_offset: int


@dataclass(frozen=True)
class _Directory:
    members: tuple[ZipMember, ...]
    infos: tuple[zipfile.ZipInfo, ...]  # zipfile's own entries, for readers that need a ZipFile (the peers)
    comment: bytes


def read_directory(blob: Blob) -> list[ZipMember]:
    """Every central-directory entry, duplicates included (each is scanned).

    Parsed once per file: format refinement, the archive walk, the pickle walk, the binary
    checks and the peer engines all ask, and parsing 100,000 entries takes about half a second.
    """
    return list(_directory(blob).members)


def read_infos(blob: Blob) -> tuple[tuple[zipfile.ZipInfo, ...], bytes]:
    """zipfile's entries of the same single parse (and the archive comment), for ``PreparsedZipFile``."""
    directory = _directory(blob)
    return directory.infos, directory.comment


def _directory(blob: Blob) -> _Directory:
    key = origin(blob)
    with _DIRECTORIES_LOCK:
        cached = _DIRECTORIES.get(key)
    if cached is not None:
        return cached
    directory = _parse_directory(blob)
    with _DIRECTORIES_LOCK:
        _DIRECTORIES[key] = directory
    return directory


def _parse_directory(blob: Blob) -> _Directory:
    try:
        with zipfile.ZipFile(open_blob(blob)) as zf:
            infos, comment = zf.infolist(), zf.comment
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, struct.error, NotImplementedError,
            IndexError, OverflowError, KeyError) as exc:
        raise CorruptStream(f"unreadable zip central directory: {type(exc).__name__}: {exc}") from None
    members = tuple(
        ZipMember(i.filename, i.header_offset, i.compress_type, i.compress_size, i.file_size,
                  i.filename.endswith("/"), i.orig_filename, i.flag_bits, i.CRC)
        for i in infos
    )
    return _Directory(members, tuple(infos), comment)


class PreparsedZipFile(zipfile.ZipFile):
    """A ``zipfile.ZipFile`` over ``file`` whose central directory was already parsed (``read_infos``).

    Opening members reads and checks them as zipfile always does (local header, CRC); only the
    directory parse is not repeated. A subclass that changes ``open`` (picklescan's relaxed reader)
    can be combined with it.
    """

    def __init__(self, file: IO[bytes], infos: tuple[zipfile.ZipInfo, ...], comment: bytes = b"") -> None:
        self._given = (infos, comment)
        super().__init__(file)

    def _RealGetContents(self) -> None:
        infos, comment = self._given
        self.filelist = list(infos)
        self.NameToInfo = {info.filename: info for info in infos}  # a later duplicate wins, as in zipfile
        self._comment = comment
        self.start_dir = 0  # only used when writing


def in_data_order(members: list[ZipMember]) -> list[ZipMember]:
    """Members sorted by where their local header sits, so a walk reads the file front to back."""
    return sorted(members, key=lambda m: m.header_offset)


def prefetch(blob: Blob, members: list[ZipMember], data_wanted: Callable[[ZipMember], int]) -> Blob:
    """``blob`` with each member's local header and first ``data_wanted(m)`` bytes read in batches.

    A span never runs past the next member's header, so no byte is fetched that the walk
    would not read anyway, apart from the gaps (``PREFETCH_GAP``) merged between spans.
    """
    starts = sorted({m.header_offset for m in members})
    spans = []
    for member in members:
        following = bisect.bisect_right(starts, member.header_offset)
        bound = starts[following] if following < len(starts) else blob.size
        want = _LOCAL_HEADER.size + len(member.raw_name.encode()) + _EXTRA_ALLOWANCE + data_wanted(member)
        spans.append((member.header_offset, min(bound, member.header_offset + want)))
    return PrefetchBlob(blob, spans)


def is_torch_storage(name: str) -> bool:
    return TORCH_STORAGE.search(name) is not None


def local_header(blob: Blob, member: ZipMember) -> LocalHeader:
    header = blob.read(member.header_offset, _LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIG:
        raise CorruptStream(f"bad local header for {member.name!r} at offset {member.header_offset}")
    fields = _LOCAL_HEADER.unpack(header)
    flags, name_len, extra_len = int(fields[3]), int(fields[-2]), int(fields[-1])
    name_offset = member.header_offset + _LOCAL_HEADER.size
    return LocalHeader(flags, name_offset, name_len, name_offset + name_len + extra_len)


def local_name(blob: Blob, header: LocalHeader) -> str:
    """The name the local header gives (loaders that walk local headers use this one)."""
    raw = blob.read(header.name_offset, header.name_length)
    return raw.decode("utf-8" if header.flags & _UTF8_NAME else "cp437", errors="replace")


def data_offset(blob: Blob, member: ZipMember) -> int:
    return local_header(blob, member).data_offset


def raw_blob(blob: Blob, member: ZipMember, start: int | None = None) -> Blob:
    """The member's compressed bytes as a window of the archive (no copy).

    ``start``: the data offset when the caller has already parsed the local header.
    """
    return SliceBlob(blob, data_offset(blob, member) if start is None else start, member.compressed_size)


def check_declared(member: ZipMember, limits: Limits) -> None:
    """DecompressionBomb if the central directory announces a bomb (stored data never expands)."""
    if member.method != STORED:
        limits.check_expansion(member.size, member.compressed_size, f"member {member.name!r}", declared=True)


def open_member(blob: Blob, member: ZipMember, limits: Limits) -> BinaryIO:
    """The member's content as a stream: seekable when stored, inflated lazily otherwise."""
    window = raw_blob(blob, member)
    if member.method == STORED:
        return open_blob(window)
    if member.method == DEFLATED:
        check_declared(member, limits)
        return decompressed(open_blob(window), "deflate", limits)
    raise CorruptStream(f"member {member.name!r} uses compression method {member.method}")
