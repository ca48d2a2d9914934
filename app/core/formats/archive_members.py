"""Walk zip and 7z archives member by member, reading only what a sniff needs.

Every member name (zip, tar, 7z) goes through ``NameChecks``: unsafe forms and duplicates.
Zip: names come from the central directory and each member's local header is parsed by
hand, both through ``zip_reader`` (so header tricks are reported, not crashed on); only a
small compressed prefix is decompressed to sniff its magic bytes. Full content is produced only for
members that are themselves archives, bounded by ``Limits`` (size and expansion ratio). A member
or archive whose declared sizes already break those limits is a ``limit-exceeded`` issue.
"""

from __future__ import annotations

import bz2
import lzma
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Protocol

from app.core.findings import Severity
from app.core.formats import zip_reader
from app.core.formats.blobs import BytesBlob
from app.core.formats.detect import NESTED_ARCHIVES, Format, detect_format, refine_zip
from app.core.formats.member_names import DuplicateNames, unsafe_reason
from app.core.formats.streams import CorruptStream
from app.core.limits import DecompressionBomb, Limits
from app.core.ports import Blob

SNIFF_BYTES = 1024  # enough for every executable header and a tar header
MALFORMED = "malformed-archive"
UNREADABLE = "archive-unreadable-member"
LIMIT = "limit-exceeded"
UNSAFE_NAME = "archive-unsafe-name"
_CHUNK = 1 << 20
_COMPRESSED_PREFIX = {0: SNIFF_BYTES, 8: 16 * 1024, 12: _CHUNK, 14: 16 * 1024}  # bz2 blocks are big


class ArchiveError(Exception):
    """The container itself cannot be walked any further."""


@dataclass(frozen=True)
class Member:
    name: str
    size: int  # declared uncompressed size
    head: bytes  # first SNIFF_BYTES of the content (may be empty when unreadable)
    content: Callable[[], Blob] | None = None  # full content, only for nested archives
    buffer_bytes: int = 0  # most memory ``content()`` may allocate (0: a window, no copy)
    python_path: bool = True  # False inside torch zips, whose code/*.py is TorchScript


@dataclass(frozen=True)
class Issue:
    rule: str
    severity: Severity
    message: str
    member: str | None = None


Event = Member | Issue


class _Decompressor(Protocol):
    def decompress(self, data: bytes, max_length: int = -1, /) -> bytes: ...


def is_nested_archive(head: bytes, size: int) -> bool:
    return detect_format(head, size) in NESTED_ARCHIVES


def zip_members(blob: Blob, limits: Limits) -> Iterator[Event]:
    try:
        members = zip_reader.read_directory(blob)
    except CorruptStream as exc:
        raise ArchiveError(str(exc)) from exc
    yield from _declared_total(members, blob.size, limits)
    torch_layout = refine_zip([m.name for m in members]) == Format.PYTORCH_ZIP
    names = NameChecks()
    members = zip_reader.in_data_order(members)
    wanted = {id(m): _sniff_prefix(m) for m in members if not _skipped(m, torch_layout)}
    blob = zip_reader.prefetch(blob, members, lambda m: wanted.get(id(m), 0))
    for member in members:
        # Every entry's names are checked, even those never sniffed: an extractor writes them all.
        yield from names.issues(member.raw_name, member.name)
        for event in _zip_member(blob, member, limits, id(member) in wanted):
            yield replace(event, python_path=False) if torch_layout and isinstance(event, Member) else event


def _skipped(member: zip_reader.ZipMember, torch_layout: bool) -> bool:
    return member.is_dir or (torch_layout and zip_reader.is_torch_storage(member.name))


def _sniff_prefix(member: zip_reader.ZipMember) -> int:
    return min(member.compressed_size, _COMPRESSED_PREFIX.get(member.method, 0))


class NameChecks:
    """The one name check of every archive walk (zip, tar, 7z): unsafe forms and duplicates."""

    def __init__(self) -> None:
        self._names = DuplicateNames()

    def issues(self, name: str, member: str | None = None) -> Iterator[Issue]:
        """``name`` as stored; ``member`` as findings label it (defaults to ``name``)."""
        label = name if member is None else member
        yield from unsafe_name_issues(name, label)
        if self._names.seen_before(name):
            yield Issue(MALFORMED, Severity.HIGH, "duplicate member name: tools disagree on which "
                        "entry is used", label)


def _declared_total(members: list[zip_reader.ZipMember], size: int, limits: Limits) -> Iterator[Issue]:
    """The archive as a whole: many members, each under the limits, can still be a bomb."""
    declared = sum(m.size for m in members if m.method != zip_reader.STORED)
    try:
        limits.check_expansion(declared, size, "zip archive", declared=True)
    except DecompressionBomb as exc:
        yield Issue(LIMIT, Severity.HIGH, str(exc))


def _declared_bomb(member: zip_reader.ZipMember, limits: Limits) -> Issue | None:
    try:
        zip_reader.check_declared(member, limits)
    except DecompressionBomb as exc:
        return Issue(LIMIT, Severity.HIGH, f"{exc}; not decompressed past its first bytes", member.name)
    return None


def unsafe_name_issues(name: str, member: str) -> Iterator[Issue]:
    reason = unsafe_reason(name)
    if reason is not None:
        yield Issue(UNSAFE_NAME, Severity.HIGH, f"member name {name!r}: {reason}; extraction tools "
                    "and some loaders write where the name says", member)


def _zip_member(blob: Blob, member: zip_reader.ZipMember, limits: Limits, sniffed: bool) -> Iterator[Event]:
    name = member.name
    bomb = _declared_bomb(member, limits) if sniffed else None
    if bomb is not None:
        yield bomb  # the head is still sniffed; the member is never inflated whole
    try:
        header = zip_reader.local_header(blob, member)
    except CorruptStream as exc:
        yield Issue(MALFORMED, Severity.HIGH, str(exc), name)
        if sniffed:
            yield Member(name, member.size, b"")
        return
    local_name = zip_reader.local_name(blob, header)
    if local_name != member.raw_name:
        yield Issue(MALFORMED, Severity.HIGH, f"local header names {local_name!r} but the central "
                    f"directory names {member.raw_name!r}", name)
        yield from unsafe_name_issues(local_name, name)  # what tools that walk local headers write
    if sniffed:
        yield from _zip_content(blob, member, header, limits, declared_bomb=bomb is not None)


def _zip_content(blob: Blob, member: zip_reader.ZipMember, header: zip_reader.LocalHeader,
                 limits: Limits, *, declared_bomb: bool) -> Iterator[Event]:
    name = member.name
    if member.flags & zip_reader.ENCRYPTED:
        yield Issue(UNREADABLE, Severity.HIGH, "encrypted flag set: the content cannot be vetted "
                    "(some loaders ignore the flag)", name)
    method = member.method
    if method not in _COMPRESSED_PREFIX:
        yield Issue(UNREADABLE, Severity.HIGH, f"unsupported compression method {method}", name)
        yield Member(name, member.size, b"")
        return
    compressed = blob.read(header.data_offset, min(member.compressed_size, _COMPRESSED_PREFIX[method]))
    try:
        head = _decompress(method, compressed, SNIFF_BYTES)
    except (zlib.error, lzma.LZMAError, OSError, EOFError, ValueError, struct.error) as exc:
        yield Issue(MALFORMED, Severity.HIGH, f"member data does not decompress: {exc}", name)
        yield Member(name, member.size, b"")
        return
    if declared_bomb or not is_nested_archive(head, member.size):
        yield Member(name, member.size, head)
        return
    window = zip_reader.raw_blob(blob, member, start=header.data_offset)
    buffer = 0 if method == zipfile.ZIP_STORED else limits.expansion_cap(member.compressed_size)
    yield Member(name, member.size, head, _content_loader(window, method, limits), buffer)


def _decompress(method: int, data: bytes, limit: int) -> bytes:
    decompressor, skip = _decompressor(method, data)
    if decompressor is None:
        return data[:limit]
    return decompressor.decompress(data[skip:], limit)


def _decompressor(method: int, first: bytes) -> tuple[_Decompressor | None, int]:
    if method == zipfile.ZIP_DEFLATED:
        return zlib.decompressobj(-15), 0
    if method == zipfile.ZIP_BZIP2:
        return bz2.BZ2Decompressor(), 0
    if method == zipfile.ZIP_LZMA:
        return _zip_lzma(first)
    return None, 0


def _zip_lzma(first: bytes) -> tuple[_Decompressor, int]:
    # Zip's LZMA: version (2), properties size (2), LZMA1 properties, raw stream.
    (props_size,) = struct.unpack_from("<H", first, 2)
    props = first[4 : 4 + props_size]
    if len(props) < 5:
        raise ValueError("truncated LZMA properties")
    lc_lp_pb, dict_size = props[0], int.from_bytes(props[1:5], "little")
    lc, rest = lc_lp_pb % 9, lc_lp_pb // 9
    filters = [{"id": lzma.FILTER_LZMA1, "dict_size": dict_size, "lc": lc, "lp": rest % 5, "pb": rest // 5}]
    return lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=filters), 4 + props_size


def _content_loader(window: Blob, method: int, limits: Limits) -> Callable[[], Blob]:
    def load() -> Blob:
        if method == zipfile.ZIP_STORED:
            return window  # no copy: nested reads go straight to the outer file
        return BytesBlob(inflate(window, method, limits))

    return load


def inflate(window: Blob, method: int, limits: Limits) -> bytearray:
    """The whole decompressed member, stopped as soon as it grows into a decompression bomb."""
    decompressor, skip = _decompressor(method, window.read(0, 64))
    if decompressor is None:
        return bytearray(window.read(0, window.size))
    cap = limits.expansion_cap(window.size)
    out = bytearray()
    offset = skip
    while offset < window.size:
        chunk = window.read(offset, _CHUNK)
        offset += len(chunk)
        out += decompressor.decompress(chunk, cap - len(out) + 1)
        limits.check_expansion(len(out), window.size, "member")  # whole-member ratio: known here
    return out
