"""A second zip reader: the archive as ``torch.load`` sees it, through PyTorch's bundled miniz.

hfvet's own reader (``zip_reader``) is CPython's ``zipfile``; torch opens the same bytes with
miniz, and the two differ where a crafted file can make them read different records. Modelled on
PyTorch 2.x's ``caffe2/serialize/inline_container.cc`` (the reader with ``.data/serialization_id``
and chunked record reads; pytorch/pytorch commit 3834689c) and its ``third_party/miniz-3.0.2/miniz.c``
(commit 01f9ef32, with PyTorch's own zip64 patch in ``read_central_dir``) as PyTorch builds it
(``MINIZ_DISABLE_ZIP_READER_CRC32_CHECKS`` in cmake/Dependencies.cmake: CRCs are never checked).
Every PyTorchStreamReader version opens archives with ``mz_zip_reader_init(size, 0)`` (sorted,
case-insensitive lookups). What that reading does:

- the end record: ``mz_zip_reader_locate_header_sig`` scans backwards in 4 KiB blocks for the last
  signature with 22 bytes after it, giving up once a block starts 64 KiB + 22 bytes from the end;
- zip64: the locator just before the end record gives the zip64 record's *absolute* offset
  (``mz_zip_reader_read_central_dir``); nothing is corrected for data prepended to the archive;
- exactly the end record's entry count is read, each entry sanity-checked as miniz does;
- an entry's sizes and offset come from ``mz_zip_file_stat_internal`` (the first zip64 extra);
  a stored entry is read for its *uncompressed* size, a directory (trailing ``/`` or the DOS
  directory attribute) or an entry of compressed size 0 for nothing
  (``mz_zip_reader_extract_to_mem_no_alloc1``);
- names are found by ``mz_zip_locate_file_binary_search`` over a heap sort of the ASCII-lowercased
  names (``mz_zip_reader_sort_central_dir_offsets_by_filename``): case-insensitive, and which of two
  equal names wins depends on that sort, so it is reproduced step by step when names tie.

One entry's checks and values are ``miniz_entries``'s, the sort ``miniz_sort``'s.

``TorchArchive`` adds ``PyTorchStreamReader``: the top folder is the first entry's name up to its
first ``/`` (``init``) and every record is looked up as ``<top>/<record>`` (``getRecordID``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from app.core.formats.miniz_entries import CENTRAL_SIZE, U32, MinizEntry, MinizError, MinizLimit, central_entry, le32
from app.core.formats.miniz_sort import Lookup
from app.core.ports import Blob

_EOCD_SIG = b"PK\x05\x06"
_EOCD_SIZE = 22
_ZIP64_LOCATOR_SIG = 0x07064B50
_ZIP64_LOCATOR_SIZE = 20
_ZIP64_EOCD_SIG = 0x06064B50
_ZIP64_EOCD_SIZE = 56
_BLOCK = 4096  # locate_header_sig's buffer
_MAX_BACK = 0xFFFF + _EOCD_SIZE  # "gone back too far (~64kb)"
MAX_DIRECTORY_BYTES = 64 * 1024 * 1024  # more central directory than hfvet reads: a limit, said so


@dataclass(frozen=True)
class MinizArchive:
    end_record_at: int
    directory_offset: int
    directory_size: int
    zip64: bool
    entries: tuple[MinizEntry, ...]
    _cache: list[Lookup] = field(default_factory=list, compare=False, repr=False)  # built on first use

    @property
    def has_ties(self) -> bool:
        """Two names equal but for ASCII case: which one a lookup finds depends on miniz's sort."""
        return self._lookup().ties

    def locate(self, name: bytes) -> MinizEntry | None:
        """``mz_zip_reader_locate_file(name, NULL, 0)``: binary search, ASCII case-insensitive."""
        key = name.split(b"\0", 1)[0].lower()  # a C string; MZ_TOLOWER only folds A-Z, as bytes.lower
        lookup = self._lookup()
        if not lookup.ties:  # one entry per lowered name: the search can only end on it
            found = lookup.unique.get(key)
            return None if found is None else self.entries[found]
        low, high = 0, len(lookup.order) - 1
        while low <= high:
            middle = low + ((high - low) >> 1)
            probe = lookup.lowered[lookup.order[middle]]
            if probe == key:
                return self.entries[lookup.order[middle]]
            if probe < key:
                low = middle + 1
            else:
                high = middle - 1
        return None

    def _lookup(self) -> Lookup:
        if not self._cache:
            self._cache.append(Lookup.of([e.name.lower() for e in self.entries]))
        return self._cache[0]


def read_archive(blob: Blob, needs: bytes = b"") -> MinizArchive:
    """The central directory as ``mz_zip_reader_init(size, flags=0)`` reads it, or MinizError.

    ``needs``: a name (lowercase) the caller will look up; a directory that cannot hold it is not
    parsed entry by entry (MinizError), which keeps large archives of other kinds cheap.
    """
    try:
        return _read_archive(blob, needs)
    except (struct.error, IndexError, ValueError, OverflowError) as exc:  # a field past its record: fail closed
        raise MinizError(f"unreadable central directory: {type(exc).__name__}: {exc}") from None


def _read_archive(blob: Blob, needs: bytes) -> MinizArchive:
    size = blob.size
    if size < _EOCD_SIZE:
        raise MinizError("smaller than an end record")
    eocd_at = _locate_end_record(blob)
    eocd = blob.read(eocd_at, _EOCD_SIZE)
    totals = _Totals.from_end_record(eocd)
    zip64 = _zip64_record(blob, eocd_at)
    if zip64 is not None:
        totals = totals.from_zip64(*zip64)
    totals.check(size)
    entries = _read_entries(blob, totals, size, needs)
    return MinizArchive(eocd_at, totals.offset, totals.size, zip64 is not None, entries)


def _locate_end_record(blob: Blob) -> int:
    """``mz_zip_reader_locate_header_sig``: the last signature with a whole record after it."""
    size = blob.size
    lowest = max(size - _BLOCK, 0)
    while lowest and size - lowest < _MAX_BACK:  # the blocks it reads before giving up
        lowest = max(lowest - (_BLOCK - 3), 0)
    window = blob.read(lowest, size - lowest)
    found = window.rfind(_EOCD_SIG, 0, size - _EOCD_SIZE - lowest + len(_EOCD_SIG))
    if found < 0:
        raise MinizError("no end-of-central-directory record in miniz's search window")
    return lowest + found


def _zip64_record(blob: Blob, eocd_at: int) -> tuple[bytes, bytes] | None:
    """The locator and the zip64 record it points at, if both signatures are right."""
    if eocd_at < _ZIP64_LOCATOR_SIZE + _ZIP64_EOCD_SIZE:
        return None
    locator = blob.read(eocd_at - _ZIP64_LOCATOR_SIZE, _ZIP64_LOCATOR_SIZE)
    if len(locator) != _ZIP64_LOCATOR_SIZE or le32(locator, 0) != _ZIP64_LOCATOR_SIG:
        return None
    record_at = struct.unpack_from("<Q", locator, 8)[0]
    if record_at > blob.size - _ZIP64_EOCD_SIZE:
        raise MinizError("zip64 locator points past the end")
    record = blob.read(record_at, _ZIP64_EOCD_SIZE)
    if len(record) != _ZIP64_EOCD_SIZE or le32(record, 0) != _ZIP64_EOCD_SIG:
        return None
    return locator, record


@dataclass(frozen=True)
class _Totals:
    files: int
    on_this_disk: int
    this_disk: int
    directory_disk: int
    size: int
    offset: int

    @staticmethod
    def from_end_record(eocd: bytes) -> _Totals:
        this_disk, directory_disk, on_disk, files, size, offset = struct.unpack_from("<4H2L", eocd, 4)
        return _Totals(files, on_disk, this_disk, directory_disk, size, offset)

    def from_zip64(self, locator: bytes, record: bytes) -> _Totals:
        record_size, _, _, this_disk, directory_disk, on_disk, files, size, offset = struct.unpack_from(
            "<Q2H2L4Q", record, 4)
        if record_size < _ZIP64_EOCD_SIZE - 12:
            raise MinizError("zip64 end record too small")
        if le32(locator, 16) != 1:
            raise MinizError("zip64 locator: multi-disk archive")
        if files > U32 or on_disk > U32:
            raise MinizError("zip64: too many files")
        if size > U32:
            raise MinizError("zip64: central directory too large")
        return _Totals(files, on_disk, this_disk, directory_disk, size, offset)

    def check(self, archive_size: int) -> None:
        if self.files != self.on_this_disk:
            raise MinizError("multi-disk archive (entry counts differ)")
        if (self.this_disk | self.directory_disk) and (self.this_disk != 1 or self.directory_disk != 1):
            raise MinizError("multi-disk archive")
        if self.size < self.files * CENTRAL_SIZE:
            raise MinizError("central directory smaller than its entry count")
        if self.offset + self.size > archive_size:
            raise MinizError("central directory runs past the end of the file")
        if self.size > MAX_DIRECTORY_BYTES:
            raise MinizLimit(f"central directory of {self.size} bytes")


def _read_entries(blob: Blob, totals: _Totals, archive_size: int, needs: bytes) -> tuple[MinizEntry, ...]:
    if not totals.files:
        return ()
    directory = blob.read(totals.offset, totals.size)
    if len(directory) != totals.size:
        raise MinizError("central directory could not be read")
    if needs not in directory.lower():
        raise MinizError(f"no entry can be named {needs!r}")
    entries = []
    at = 0
    for index in range(totals.files):
        entry, length = central_entry(directory, at, index, totals.this_disk, archive_size)
        entries.append(entry)
        at += length
    return tuple(entries)


@dataclass(frozen=True)
class TorchArchive:
    """``PyTorchStreamReader`` over a miniz reading: records live under the first entry's folder."""

    archive: MinizArchive
    prefix: bytes  # "<top>/"

    @staticmethod
    def open(blob: Blob, needs: str = "") -> TorchArchive:
        """``PyTorchStreamReader::init``; ``needs``: a record the caller looks up (see ``read_archive``)."""
        archive = read_archive(blob, needs.lower().encode())
        if not archive.entries:
            raise MinizError("archive does not contain any files")
        first = archive.entries[0].name
        if b"/" not in first:
            raise MinizError("first file in archive is not in a subdirectory")
        return TorchArchive(archive, first[: first.index(b"/") + 1])

    def record(self, name: str) -> MinizEntry | None:
        """``getRecordID(name)``: the entry miniz finds for ``<top>/<name>``."""
        return self.archive.locate(self.prefix + name.encode())

    def record_keys(self) -> list[bytes]:
        """``getAllRecords`` as bytes, prefix removed (names outside the folder make torch.load fail; skipped)."""
        names = (entry.name.split(b"\0", 1)[0] for entry in self.archive.entries)  # C strings
        return [name[len(self.prefix):] for name in names if name.startswith(self.prefix)]

    def record_names(self) -> list[str]:
        return [key.decode("utf-8", "replace") for key in self.record_keys()]
