"""Walk a 7z archive with py7zr: names from the header, heads from a bounded in-memory extract.

7z members are usually in solid blocks, so sniffing a member means decompressing the
block. py7zr never writes more than a member's declared size, so the declared sizes are
judged first (size and expansion ratio, see ``Limits``) and a bomb is never extracted;
``max_extract_size`` caps the total as well. Only heads are kept, except for members that
are themselves archives (kept whole, under the memory budget).
"""

from __future__ import annotations

import lzma
from collections.abc import Iterator

import py7zr
import py7zr.exceptions
import py7zr.io

from app.core.findings import Severity
from app.core.formats.archive_members import (
    LIMIT,
    MALFORMED,
    SNIFF_BYTES,
    UNREADABLE,
    ArchiveError,
    Event,
    Issue,
    Member,
    is_nested_archive,
)
from app.core.formats.blobs import BytesBlob, open_blob
from app.core.limits import DecompressionBomb, LimitExceeded, Limits
from app.core.membudget import MemoryBudget
from app.core.ports import Blob

_LIBRARY_ERRORS = (
    py7zr.exceptions.ArchiveError, lzma.LZMAError, OSError, EOFError, ValueError, KeyError, IndexError,
)


class _HeadWriter(py7zr.io.Py7zIO):
    """Keeps a member's first bytes, or all of it when those bytes announce an archive."""

    def __init__(self) -> None:
        self.data = bytearray()
        self._whole = False
        self._size = 0

    def write(self, s: bytes | bytearray) -> int:
        self._size += len(s)
        if len(self.data) < SNIFF_BYTES or self._whole:
            self.data += s
            if not self._whole and len(self.data) >= SNIFF_BYTES:
                self._whole = is_nested_archive(bytes(self.data[:SNIFF_BYTES]), self._size)
                if not self._whole:
                    del self.data[SNIFF_BYTES:]
        return len(s)

    def read(self, size: int | None = None) -> bytes:
        return bytes(self.data if size is None else self.data[:size])

    def seek(self, offset: int, whence: int = 0) -> int:
        return 0

    def flush(self) -> None:
        return None

    def size(self) -> int:
        return self._size


class _HeadFactory(py7zr.io.WriterFactory):
    def __init__(self) -> None:
        self.writers: dict[str, _HeadWriter] = {}

    def create(self, filename: str) -> py7zr.io.Py7zIO:
        writer = _HeadWriter()
        self.writers[filename] = writer
        return writer


def sevenzip_members(blob: Blob, limits: Limits, memory: MemoryBudget) -> Iterator[Event]:
    factory = _HeadFactory()
    try:
        with py7zr.SevenZipFile(open_blob(blob), mode="r", max_extract_size=limits.max_decompressed_bytes) as archive:
            listing = [f for f in archive.list() if not f.is_directory]
            refusal = _refusal(archive, listing, blob.size, limits)
            if refusal is not None:
                yield refusal
                yield from (Member(f.filename, f.uncompressed or 0, b"") for f in listing)
                return
            declared = sum(f.uncompressed or 0 for f in listing)
            with memory.reserve(declared):  # nested archives are kept whole until walked
                failure = _extract(archive, factory)
                yield from _members(listing, factory, failure)
    except py7zr.exceptions.PasswordRequired as exc:
        raise ArchiveError(f"encrypted 7z header: {exc}") from exc
    except _LIBRARY_ERRORS as exc:
        raise ArchiveError(f"unreadable 7z archive: {type(exc).__name__}: {exc}") from exc


def _refusal(archive: py7zr.SevenZipFile, listing: list[py7zr.FileInfo], size: int, limits: Limits) -> Issue | None:
    """Why the members are not extracted at all: encrypted, or a declared decompression bomb."""
    if archive.needs_password():
        return Issue(UNREADABLE, Severity.HIGH, "encrypted 7z archive: members cannot be vetted")
    try:
        limits.check_expansion(sum(f.uncompressed or 0 for f in listing), size, "7z archive", declared=True)
    except DecompressionBomb as exc:
        return Issue(LIMIT, Severity.HIGH, f"{exc}; members not extracted")
    return None


def _members(listing: list[py7zr.FileInfo], factory: _HeadFactory, failure: str | None) -> Iterator[Event]:
    if failure:
        yield Issue(MALFORMED, Severity.HIGH, failure)
    for entry in listing:
        yield _member(entry.filename, entry.uncompressed or 0, factory.writers.get(entry.filename))


def _extract(archive: py7zr.SevenZipFile, factory: _HeadFactory) -> str | None:
    try:
        archive.extractall(factory=factory)
    except py7zr.exceptions.DecompressionBombError as exc:
        raise LimitExceeded(f"7z archive decompresses past the limit: {exc}") from exc
    except _LIBRARY_ERRORS as exc:
        return f"7z members do not decompress cleanly: {type(exc).__name__}: {exc}"
    return None


def _member(name: str, size: int, writer: _HeadWriter | None) -> Member:
    if writer is None:
        return Member(name, size, b"")
    head = bytes(writer.data[:SNIFF_BYTES])
    if not is_nested_archive(head, writer.size()):
        return Member(name, size, head)
    whole = BytesBlob(bytes(writer.data))
    return Member(name, size, head, lambda: whole)
