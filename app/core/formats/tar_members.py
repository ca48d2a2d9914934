"""Walk tar headers (plain, or inside a gzip/bz2/xz stream) without reading member data.

A plain tar is walked by seeking from header to header through the blob. A compressed
tar cannot be seeked, so the stream is decompressed once, front to back, with member
data skipped as it passes and the total judged by ``Limits`` (size and expansion ratio).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import posixpath
import tarfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Protocol

from app.core.findings import Severity
from app.core.formats.archive_members import (
    MALFORMED,
    SNIFF_BYTES,
    UNSAFE_NAME,
    ArchiveError,
    Event,
    Issue,
    Member,
    NameChecks,
    is_nested_archive,
)
from app.core.formats.blobs import BytesBlob, SliceBlob, open_blob
from app.core.formats.detect import Format
from app.core.limits import Limits
from app.core.membudget import MemoryBudget
from app.core.ports import Blob

BLOCK = 512
MAX_META_BYTES = 1 << 20  # GNU long names and pax records: larger is an attack, not a name
_NO_DATA_TYPES = {tarfile.LNKTYPE, tarfile.SYMTYPE, tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.DIRTYPE,
                  tarfile.FIFOTYPE}
_PAX_TYPES = {tarfile.XHDTYPE, tarfile.SOLARIS_XHDTYPE}  # per-member records, as tarfile reads them
_META_TYPES = {tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XGLTYPE, *_PAX_TYPES}
_CHUNK = 1 << 20


class Cursor(Protocol):
    def read(self, n: int) -> bytes: ...
    def skip(self, n: int) -> None: ...
    def take(self, n: int, head: bytes) -> Blob:
        """The next ``n`` bytes as a blob (``head`` = the part already read)."""
        ...
    def hold(self, n: int) -> AbstractContextManager[None]:
        """Reserve memory for a ``take(n)`` and for as long as its blob is used."""
        ...


class BlobCursor:
    """Positional reads over a seekable blob: skipping member data costs nothing."""

    def __init__(self, blob: Blob, start: int = 0) -> None:
        self._blob = blob
        self.pos = start

    def read(self, n: int) -> bytes:
        data = self._blob.read(self.pos, n)
        self.pos += len(data)
        return data

    def skip(self, n: int) -> None:
        self.pos += n
        if self.pos > self._blob.size:
            raise ArchiveError("tar ends inside a member")

    def take(self, n: int, head: bytes) -> Blob:
        start = self.pos - len(head)
        self.skip(n - len(head))
        return SliceBlob(self._blob, start, n)

    def hold(self, n: int) -> AbstractContextManager[None]:
        return nullcontext()  # take() is a window: nothing is copied


class StreamCursor:
    """Sequential reads over a decompressing stream, stopped at a decompression bomb."""

    def __init__(self, stream: Compressed, limits: Limits, memory: MemoryBudget, pushback: bytes = b"") -> None:
        self._stream = stream
        self._limits = limits
        self._memory = memory
        self._pending = pushback
        self.total = len(pushback)

    def read(self, n: int) -> bytes:
        taken, self._pending = self._pending[:n], self._pending[n:]
        while len(taken) < n:
            more = self._stream.stream.read(min(n - len(taken), _CHUNK))
            self.total += len(more)
            self._limits.check_expansion(self.total, self._stream.consumed(), "compressed stream")
            if not more:
                break
            taken += more
        return taken

    def skip(self, n: int) -> None:
        while n > 0:
            got = self.read(min(n, _CHUNK))
            if not got:
                raise ArchiveError("compressed tar ends inside a member")
            n -= len(got)

    def take(self, n: int, head: bytes) -> Blob:
        content = bytearray(head)
        content += self.read(n - len(head))
        return BytesBlob(content)

    def hold(self, n: int) -> AbstractContextManager[None]:
        return self._memory.reserve(n)


@dataclass(frozen=True)
class Compressed:
    stream: io.BufferedIOBase
    consumed: Callable[[], int]  # compressed bytes read so far (for the expansion ratio)


def open_stream(blob: Blob, fmt: str) -> Compressed:
    raw = open_blob(blob)
    stream: io.BufferedIOBase
    if fmt == Format.GZIP:
        stream = gzip.GzipFile(fileobj=raw)
    elif fmt == Format.BZ2:
        stream = bz2.BZ2File(raw)
    else:
        stream = lzma.LZMAFile(raw)  # noqa: SIM115 - the walk owns it
    return Compressed(stream, raw.tell)


def tar_members(cursor: Cursor) -> Iterator[Event]:
    """Members of a tar, from its 512-byte headers; stops at the end-of-archive block."""
    pending: dict[str, str] = {}
    names = NameChecks()
    while True:
        block = cursor.read(BLOCK)
        if len(block) < BLOCK or block == bytes(BLOCK):
            if block.strip(b"\x00"):
                yield Issue(MALFORMED, Severity.HIGH, "tar ends inside a header block")
            return
        info = _parse_header(block)
        if info.type in _META_TYPES:
            _read_meta(cursor, info, info.size, pending)
            continue
        if info.type == tarfile.GNUTYPE_SPARSE:
            _skip_sparse_extensions(cursor, block)
        name = pending.pop("path", info.name)
        size = int(pending.pop("size", info.size))
        target = pending.pop("linkpath", info.linkname)
        pending.clear()
        yield from names.issues(name)  # every entry, links and directories too: tar creates them all
        if info.type in (tarfile.SYMTYPE, tarfile.LNKTYPE):
            yield from _link_issues(name, target, symbolic=info.type == tarfile.SYMTYPE)
        # As tarfile: links, devices and directories have no data whatever their (pax) size;
        # every other type, unknown ones included, is extracted as a regular file.
        if info.type not in _NO_DATA_TYPES:
            yield from _member(cursor, name, size)


def _link_issues(name: str, target: str, *, symbolic: bool) -> Iterator[Issue]:
    """A link whose target leaves the archive: whoever reads the extracted member (``torch.load`` of a
    ``.nemo``'s ``model_weights.ckpt``) reads a file hfvet never saw. tarfile resolves a symlink from
    the link's folder and a hard link from the archive's root (``TarFile._find_link_target``)."""
    base = posixpath.dirname(name) if symbolic else ""
    resolved = posixpath.normpath(posixpath.join(base, target.replace("\\", "/")))
    if target.startswith(("/", "\\")) or resolved == ".." or resolved.startswith("../"):
        yield Issue(UNSAFE_NAME, Severity.HIGH, f"{'symbolic' if symbolic else 'hard'} link {name!r} -> "
                    f"{target!r} points outside the archive: a loader reading the extracted file reads bytes "
                    "hfvet never saw", name)


def _parse_header(block: bytes) -> tarfile.TarInfo:
    try:
        return tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
    except tarfile.HeaderError as exc:
        raise ArchiveError(f"bad tar header: {exc}") from exc


def _read_meta(cursor: Cursor, info: tarfile.TarInfo, size: int, pending: dict[str, str]) -> None:
    if size > MAX_META_BYTES:
        raise ArchiveError(f"tar {info.type!r} header claims {size} bytes of metadata")
    data = cursor.read(size)
    cursor.skip(_padding(size))
    if len(data) < size:
        raise ArchiveError("tar ends inside a metadata header")
    if info.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK):
        key = "path" if info.type == tarfile.GNUTYPE_LONGNAME else "linkpath"
        pending[key] = data.split(b"\x00", 1)[0].decode("utf-8", "surrogateescape")
        return
    if info.type in _PAX_TYPES:
        pending.update(_pax_records(data))


# tarfile names a member after GNU.sparse.name as it does after path (whichever comes last).
_PAX_ALIASES = {b"GNU.sparse.name": b"path"}


def _pax_records(data: bytes) -> dict[str, str]:
    """``path`` and ``size`` from pax records ``"<len> <key>=<value>\\n"``."""
    records: dict[str, str] = {}
    pos = 0
    while pos < len(data):
        space = data.find(b" ", pos)
        if space < 0 or not data[pos:space].isdigit() or int(data[pos:space]) <= 0:
            raise ArchiveError("malformed pax extended header")
        end = pos + int(data[pos:space])
        key, _, value = data[space + 1 : end].rstrip(b"\n").partition(b"=")
        key = _PAX_ALIASES.get(key, key)
        if key in (b"path", b"size", b"linkpath"):
            records[key.decode()] = value.decode("utf-8", "surrogateescape")  # the last record wins, as in tarfile
        pos = end
    if "size" in records and not records["size"].isdigit():
        raise ArchiveError(f"pax size is not a number: {records['size']!r}")
    return records


def _skip_sparse_extensions(cursor: Cursor, block: bytes) -> None:
    """Old GNU sparse headers may chain extension blocks; the member data starts after them."""
    extended = block[482]
    while extended:
        extension = cursor.read(BLOCK)
        if len(extension) < BLOCK:
            raise ArchiveError("tar ends inside a sparse member header")
        extended = extension[504]


def _member(cursor: Cursor, name: str, size: int) -> Iterator[Event]:
    head = cursor.read(min(size, SNIFF_BYTES))
    if len(head) < min(size, SNIFF_BYTES):
        raise ArchiveError(f"tar ends inside member {name!r}")
    if is_nested_archive(head, size):
        with cursor.hold(size):  # held until the consumer has walked the nested archive
            content = cursor.take(size, head)
            cursor.skip(_padding(size))
            yield Member(name, size, head, lambda: content)
        return
    cursor.skip(size - len(head) + _padding(size))
    yield Member(name, size, head)


def _padding(size: int) -> int:
    return -size % BLOCK
