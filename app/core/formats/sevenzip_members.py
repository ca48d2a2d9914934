"""Walk a 7z archive with py7zr: names from the header, heads from a bounded in-memory extract.

7z members are usually in solid blocks, so sniffing a member means decompressing the
block. py7zr never writes more than a member's declared size, so the declared sizes are
judged first (size and expansion ratio, see ``Limits``) and a bomb is never extracted;
``max_extract_size`` caps the total as well. Only heads are kept, except for members that
are themselves archives (kept whole, under the memory budget).
"""

from __future__ import annotations

import lzma
import pathlib
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
    NameChecks,
    is_nested_archive,
)
from app.core.formats.blobs import BytesBlob, open_blob
from app.core.limits import DecompressionBomb, LimitExceeded, Limits
from app.core.membudget import MemoryBudget
from app.core.ports import Blob

_LIBRARY_ERRORS = (
    py7zr.exceptions.ArchiveError, lzma.LZMAError, OSError, EOFError, ValueError, KeyError, IndexError,
    TypeError,  # py7zr: "Unknown field" for a header property id it does not know
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
    """Writers by the name py7zr gives them, which is not the stored name (see ``_output_key``)."""

    def __init__(self) -> None:
        self.writers: dict[str, _HeadWriter] = {}

    def create(self, filename: str) -> py7zr.io.Py7zIO:
        writer = _HeadWriter()
        self.writers[filename] = writer
        return writer

    def writer_for(self, listing: list[py7zr.FileInfo]) -> list[_HeadWriter | None]:
        """Each listed member's writer: py7zr renames duplicates ``name_0``, ``name_1``... and
        cleans names (``./a`` -> ``a``); looked up by the stored name, those members went unsniffed."""
        counts: dict[str, int] = {}
        found: list[_HeadWriter | None] = []
        for entry in listing:
            seen = counts.get(entry.filename)
            counts[entry.filename] = 0 if seen is None else seen + 1
            name = entry.filename if seen is None else f"{entry.filename}_{seen}"
            found.append(self.writers.get(_output_key(name)))
        return found


def _output_key(name: str) -> str:
    # py7zr's _sanitize_member_name for names it accepts: no leading "/" or "./", no "." parts.
    name = name.lstrip("/").removeprefix("./")
    return str(pathlib.PurePosixPath(*[p for p in pathlib.PurePosixPath(name).parts if p != "."]))


def sevenzip_members(blob: Blob, limits: Limits, memory: MemoryBudget) -> Iterator[Event]:
    factory = _HeadFactory()
    try:
        with py7zr.SevenZipFile(open_blob(blob), mode="r", max_extract_size=limits.max_decompressed_bytes) as archive:
            everything = archive.list()
            yield from _name_issues(everything)
            listing = [f for f in everything if not f.is_directory]
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


def _name_issues(entries: list[py7zr.FileInfo]) -> Iterator[Issue]:
    names = NameChecks()
    for entry in entries:  # directories too: an extractor creates them where the name says
        yield from names.issues(entry.filename)


def _members(listing: list[py7zr.FileInfo], factory: _HeadFactory, failure: str | None) -> Iterator[Event]:
    if failure:
        yield Issue(MALFORMED, Severity.HIGH, failure)
    for entry, writer in zip(listing, factory.writer_for(listing), strict=True):
        yield from _member(entry.filename, entry.uncompressed or 0, writer, failure is None)


def _extract(archive: py7zr.SevenZipFile, factory: _HeadFactory) -> str | None:
    try:
        archive.extractall(factory=factory)
    except py7zr.exceptions.DecompressionBombError as exc:
        raise LimitExceeded(f"7z archive decompresses past the limit: {exc}") from exc
    except _LIBRARY_ERRORS as exc:
        return f"7z members do not decompress cleanly: {type(exc).__name__}: {exc}"
    return None


def _member(name: str, size: int, writer: _HeadWriter | None, extracted: bool) -> Iterator[Event]:
    if writer is None:
        if extracted and size:  # the extract went through, yet this member's bytes never arrived
            yield Issue(UNREADABLE, Severity.HIGH, "member content was not produced by the 7z reader: "
                        "not vetted", name)
        yield Member(name, size, b"")
        return
    head = bytes(writer.data[:SNIFF_BYTES])
    if not is_nested_archive(head, writer.size()):
        yield Member(name, size, head)
        return
    whole = BytesBlob(bytes(writer.data))
    yield Member(name, size, head, lambda: whole)
