"""Native binaries, and archives that carry binaries or Python code (threat model item 3).

Top-level ELF / PE / Mach-O / ``ar`` files are named by kind and architecture. Archives
(zip, wheel, torch zip, tar, compressed tar, 7z) are walked member by member, sniffing
only each member's first bytes; nested archives are entered up to ``max_nesting``. Text,
unknown and zlib files are tried for an executable under a cheap encoding (single-byte XOR,
base64, hex, xxd dumps, gzip/zlib; see ``formats.encoded_exe``): a stager's payload is a binary.
"""

from __future__ import annotations

import importlib.metadata
import lzma
import zlib
from collections.abc import Callable, Iterator
from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.archive_members import (
    MALFORMED,
    SNIFF_BYTES,
    UNREADABLE,
    UNSAFE_NAME,
    ArchiveError,
    Event,
    Issue,
    Member,
    zip_members,
)
from app.core.formats.blobs import BudgetBlob, SliceBlob
from app.core.formats.detect import COMPRESSED_STREAMS, EXECUTABLES, RAW_CONTENT, ZIP_KINDS, Format, detect_format
from app.core.formats.encoded_exe import find_encoded
from app.core.formats.exe_headers import AR_MAGIC, ExecInfo, ar_members, identify
from app.core.formats.tar_members import BlobCursor, StreamCursor, open_stream, tar_members
from app.core.limits import LimitExceeded, Limits
from app.core.manifest import ManifestFile
from app.core.membudget import MemoryBudget
from app.core.ports import Blob, SourceError
from app.core.scanners.base import ScanContext

# Every zip kind sniff.refine_format names: any zip can carry a member that is native code.
ARCHIVE_FORMATS = ZIP_KINDS | COMPRESSED_STREAMS | {Format.TAR, Format.SEVEN_Z}
# What an encoded executable looks like to the sniffer: text (base64, hex), noise (XOR), zlib.
ENCODED_CANDIDATES = frozenset({Format.TEXT, Format.UNKNOWN, Format.PICKLE, Format.ZLIB, *RAW_CONTENT})
# What gzip/bz2/lzma raise on corrupt input (BadGzipFile and bz2 errors are OSErrors).
STREAM_ERRORS = (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError)
MAX_MEMBER_FINDINGS = 100  # per file; the rest are counted in one summary finding
AUTO_EXEC_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})
PYTHON_SUFFIXES = (".py", ".pyc", ".pyo", ".pyw")


class BinaryScanner:
    name: ClassVar[str] = "binaries"
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo("executable-binary", Severity.HIGH,
                 "ELF, PE or Mach-O executable or shared object, or ar static library (kind and arch)",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo("archive-executable", Severity.HIGH,
                 "zip/wheel/tar/7z member (at any nesting depth) that is a native executable or library",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo("encoded-executable", Severity.HIGH,
                 "file that decodes cheaply (single-byte XOR, base64, hex, xxd dump, gzip/zlib) to an executable",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo("archive-python-code", Severity.MEDIUM,
                 "Python files in an archive; .pth and sitecustomize.py run on interpreter start: high",
                 kind=RuleKind.REMOTE_CODE),
        RuleInfo(MALFORMED, Severity.HIGH,
                 "archive that loaders may read differently: bad headers, name mismatch, duplicates",
                 kind=RuleKind.MALFORMED_CONTAINER),
        RuleInfo(UNSAFE_NAME, Severity.HIGH,
                 "member name an extractor writes outside its target: absolute, '..', backslash or drive forms",
                 kind=RuleKind.MALFORMED),
        RuleInfo(UNREADABLE, Severity.HIGH, "encrypted or unsupported member that cannot be vetted",
                 kind=RuleKind.INCOMPLETE),
        RuleInfo.limit("too many members, too deep nesting or too many bytes"),
        RuleInfo.scan_error("the file could not be read to the end"),
    )

    def handles(self, file: ManifestFile) -> bool:
        return file.format in EXECUTABLES or file.format in ARCHIVE_FORMATS or file.format in ENCODED_CANDIDATES

    def version(self) -> str:
        return f"1.0 (py7zr {importlib.metadata.version('py7zr')})"  # metadata: py7zr loads only for a 7z

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        blob = BudgetBlob(ctx.blob, ctx.limits.max_read_bytes_per_file)
        fmt = ctx.file.format
        try:
            if fmt in EXECUTABLES:
                _report_executable(blob, sink)
            elif fmt in ENCODED_CANDIDATES:
                _report_encoded(blob, sink)
            else:
                _ArchiveWalk(sink, ctx.limits, ctx.budget()).top(blob, fmt)
        except LimitExceeded as exc:
            sink.add("limit-exceeded", Severity.HIGH, f"stopped walking: {exc}")
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc), sink.findings)
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)


def _report_executable(blob: Blob, sink: FindingSink) -> None:
    head = blob.read(0, 4096)
    info = identify(lambda off, n: head[off : off + n] if off + n <= len(head) else blob.read(off, n))
    if head.startswith(AR_MAGIC):
        info = _describe_ar(blob)
    if info is None:
        kind = detect_format(head, blob.size)
        sink.add("executable-binary", Severity.HIGH,
                 f"{kind} magic bytes with a header that does not parse: treated as native code",
                 evidence=head[:16].hex())
        return
    sink.add("executable-binary", Severity.HIGH, f"native code: {info.describe()}", evidence=info.describe())


def _report_encoded(blob: Blob, sink: FindingSink) -> None:
    found = find_encoded(blob.read, blob.size)
    if found is not None:
        sink.add("encoded-executable", Severity.HIGH,
                 f"an executable hidden by encoding: {found.describe()}; decoding it is one command",
                 evidence=found.describe())


def _describe_ar(blob: Blob, sample: int = 16) -> ExecInfo:
    try:
        members = ar_members(blob.read, blob.size, max_members=100_000)
    except (ValueError, UnicodeDecodeError):
        return ExecInfo("ar archive with malformed member headers", "unknown")
    names = [name for name, _, _ in members]
    if "debian-binary" in names:
        return ExecInfo(f"Debian package (ar, {len(members)} members)", "see data.tar")
    arches = set()
    for _name, offset, length in members[:sample]:
        found = identify(SliceBlob(blob, offset, length).read)
        if found:
            arches.add(found.describe())
    detail = "; ".join(sorted(arches)) or "no recognised object files in the first members"
    return ExecInfo(f"ar static archive ({len(members)} members)", detail)


class _ArchiveWalk:
    """One file's walk: counts members across nesting and caps repeated findings."""

    def __init__(self, sink: FindingSink, limits: Limits, memory: MemoryBudget) -> None:
        self._sink = sink
        self._limits = limits
        self._memory = memory
        self._members = 0
        self._reported = 0
        self._suppressed = 0

    def top(self, blob: Blob, fmt: str) -> None:
        self._archive(blob, fmt, prefix="", depth=0)
        if self._suppressed:
            self._sink.add("archive-executable", Severity.HIGH,
                           f"{self._suppressed} more executable members not listed individually")

    def _archive(self, blob: Blob, fmt: str, prefix: str, depth: int) -> None:
        python_files: list[str] = []
        try:
            for event in self._events(blob, fmt):
                if isinstance(event, Issue):
                    member = prefix + event.member if event.member else (prefix.rstrip("!") or None)
                    self._sink.add(event.rule, event.severity, event.message, member=member)
                else:
                    self._member(event, prefix, depth, python_files)
        except ArchiveError as exc:
            self._sink.add(MALFORMED, Severity.HIGH, str(exc), member=prefix.rstrip("!") or None)
        except STREAM_ERRORS as exc:
            self._sink.add(MALFORMED, Severity.HIGH, f"corrupt compressed data: {type(exc).__name__}: {exc}",
                           member=prefix.rstrip("!") or None)
        if python_files:
            self._sink.add("archive-python-code", Severity.MEDIUM,
                           f"{len(python_files)} Python file(s) inside the archive",
                           member=python_files[0], evidence=", ".join(python_files[:10]))

    def _events(self, blob: Blob, fmt: str) -> Iterator[Event]:
        if fmt in ZIP_KINDS:
            return zip_members(blob, self._limits)
        if fmt == Format.TAR:
            return tar_members(BlobCursor(blob))
        if fmt == Format.SEVEN_Z:
            from app.core.formats.sevenzip_members import sevenzip_members  # py7zr: only for a 7z archive

            return sevenzip_members(blob, self._limits, self._memory)
        return _compressed(blob, fmt, self._limits, self._memory)

    def _member(self, member: Member, prefix: str, depth: int, python_files: list[str]) -> None:
        self._members += 1
        if self._members > self._limits.max_archive_members:
            raise LimitExceeded(f"more than {self._limits.max_archive_members} archive members")
        full = prefix + member.name
        self._python(member, full, python_files)
        info = identify(lambda off, n: member.head[off : off + n])
        if info is not None or detect_format(member.head, member.size) in EXECUTABLES:
            self._executable(full, info, member.head)
        if member.content is not None:
            with self._memory.reserve(member.buffer_bytes):  # what content() may inflate
                self._nested(member.content, member.head, full, depth)

    def _python(self, member: Member, full: str, python_files: list[str]) -> None:
        base = member.name.rsplit("/", 1)[-1].lower()
        if base.endswith(".pth") or base in AUTO_EXEC_NAMES:
            self._sink.add("archive-python-code", Severity.HIGH,
                           f"{base} runs automatically on every Python start once installed", member=full)
        elif member.python_path and base.endswith(PYTHON_SUFFIXES):
            python_files.append(full)

    def _executable(self, full: str, info: ExecInfo | None, head: bytes) -> None:
        if self._reported >= MAX_MEMBER_FINDINGS:
            self._suppressed += 1
            return
        self._reported += 1
        what = info.describe() if info else f"{detect_format(head, len(head))} header past the sniffed bytes"
        self._sink.add("archive-executable", Severity.HIGH, f"archive member is native code: {what}",
                       member=full, evidence=what)

    def _nested(self, content: Callable[[], Blob], head: bytes, full: str, depth: int) -> None:
        if depth + 1 > self._limits.max_nesting:
            self._sink.add("limit-exceeded", Severity.HIGH,
                           f"archive nested deeper than {self._limits.max_nesting} levels: not entered",
                           member=full)
            return
        inner = content()
        fmt = detect_format(head, inner.size)
        self._archive(inner, fmt, prefix=full + "!", depth=depth + 1)


def _compressed(blob: Blob, fmt: str, limits: Limits, memory: MemoryBudget) -> Iterator[Event]:
    """A gzip/bz2/xz stream: a tar inside is walked; anything else is one sniffed member.

    Pickles in the payload (joblib's compressed dumps) are the pickle engine's to vet.
    """
    source = open_stream(blob, fmt)
    head = source.stream.read(SNIFF_BYTES)
    max_bytes = limits.max_decompressed_bytes
    payload = detect_format(head, max_bytes)
    cursor = StreamCursor(source, limits, memory, pushback=head)
    if payload == Format.TAR:
        yield from tar_members(cursor)
        return
    name = f"<{fmt} payload>"
    if payload in ARCHIVE_FORMATS:
        with cursor.hold(limits.expansion_cap(blob.size)):
            inner = cursor.take(max_bytes + 1, b"")  # a bomb stops it before that
            yield Member(name, inner.size, head, lambda: inner)
        return
    yield Member(name, len(head), head)
