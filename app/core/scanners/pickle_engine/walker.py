"""Walk a file the way model loaders read it, and analyse every pickle they would run.

Containers (PyTorch zip, npz, zip, 7z, tar, gzip/bz2/xz/zlib) are opened lazily through
the blob; each member is sniffed by content, and pickles, legacy torch streams, ``.npy``
object arrays and nested containers are followed down to ``limits.max_nesting``.
"""

from __future__ import annotations

import io
import re
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from app.core.findings import FindingSink, Severity
from app.core.formats import numpy_format, zip_differential, zip_reader
from app.core.formats.blobs import READ_BUFFER, BytesBlob, open_blob
from app.core.formats.detect import (
    HEAD_BYTES,
    INFLATABLE,
    LEGACY_TORCH_PICKLES,
    UNSUPPORTED_COMPRESSION,
    ZIP_KINDS,
    Format,
    could_start_pickle,
    detect_format,
    refine_zip,
)
from app.core.formats.streams import CHUNK, CorruptStream, decompressed, head_of, read_capped
from app.core.formats.zip_reader import ZipMember
from app.core.limits import LimitExceeded, Limits, ReadBudgetExceeded
from app.core.membudget import MemoryBudget, process_budget
from app.core.ports import Blob
from app.core.scanners.pickle_engine import joblib_format, torch_archive, torch_tar
from app.core.scanners.pickle_engine.analysis import analyze_pickles
from app.core.scanners.pickle_engine.recording import replayed
from app.core.scanners.pickle_engine.torch_trust import StorageRef
from app.core.scanners.pickle_engine.values import Value
from app.core.scanners.pickle_engine.walk_state import RULE_LIMIT, PickleAnalysis, ReadMode

RULE_UNREADABLE = "container-unreadable"
RULE_DIFFERENTIAL = "parser-differential"
# Content that did not sniff as anything: a protocol-0/1 pickle whose first argument is longer
# than the sniff window looks like text. Walked leniently (see analyze_pickles).
LENIENT = frozenset({Format.TEXT, Format.UNKNOWN})
_PLAIN = ReadMode()
_LENIENT = ReadMode(lenient=True)
_LOADER_NAMED_TEXT = ReadMode(lenient=True, loader_named=True)
_JOBLIB_COMPAT = ReadMode(joblib=True, joblib_compat=True)
_NO_JOBLIB = ReadMode(joblib=False)  # another loader's unpickler runs (numpy's allow_pickle)
_BLOB_FORMATS = ZIP_KINDS | {Format.SEVEN_Z}
_STREAM_FORMATS = frozenset({Format.PICKLE, Format.TORCH_LEGACY, Format.NUMPY, Format.TAR}) | INFLATABLE | LENIENT
_PICKLE_NAME = re.compile(r"\.(pkl|pickle)$", re.IGNORECASE)
# Names a loader unpickles whatever they hold: pickle/joblib.load, torch.load's legacy
# fallback, numpy.load's allow_pickle fallback for content that is neither zip nor .npy.
_LOADER_NAME = re.compile(r"\.(pkl|pickle|joblib|bin|pt|pth|ckpt|npy|npz)$", re.IGNORECASE)
# torch reads <top>/data/<n> records as raw storage bytes; it never unpickles them.
_TORCH_NAME = re.compile(r"\.(pt|pth|bin|ckpt)$", re.IGNORECASE)  # names torch.load is pointed at


@dataclass
class OpcodeCount:
    """The opcodes the engine walked in one pickle stream of the file (issue 13: count once, hand on).

    ``member`` is None for the file itself, else the archive path (``a.zip!archive/data.pkl``).
    ``complete`` is False when the walk stopped early (a break, a limit): the count is then a
    lower bound. A joblib stream counts both of its readings (see ``analysis._merged``).
    """

    member: str | None
    opcodes: int
    complete: bool


@dataclass(frozen=True)
class Entry:
    """One archive member, opened on demand."""

    name: str
    size: int
    open_stream: Callable[[], BinaryIO]
    reopenable: bool
    open_blob: Callable[[], Blob] | None = None


class ContainerWalker:
    def __init__(self, sink: FindingSink, limits: Limits, memory: MemoryBudget | None = None) -> None:
        self.sink = sink
        self.limits = limits
        self.memory = memory or process_budget(limits)  # held while a member is materialized
        self._in_torch_zip = 0  # > 0 while walking a torch archive's records: torch's unpickler reads them
        self.opcode_counts: list[OpcodeCount] = []  # one per pickle stream walked, in walk order
        self._torch_storages: dict[str, list[StorageRef]] = {}  # torch zip record -> storages it declares
        self._torch_named = False  # the top-level file is a pickle named for torch.load

    @property
    def opcodes(self) -> int:
        """Opcodes walked in all of the file's pickle streams."""
        return sum(c.opcodes for c in self.opcode_counts)

    def _analyze(self, stream: BinaryIO, member: str | None, max_pickles: int | None = None,
                 mode: ReadMode = _PLAIN, torch_load: bool = False) -> PickleAnalysis:
        result = analyze_pickles(stream, self.sink, self.limits, member, max_pickles, mode, torch_load=torch_load)
        self.opcode_counts.append(OpcodeCount(member, result.opcodes, not (result.broken or result.limit_hit)))
        return result

    def scan(self, blob: Blob, fmt: str, name: str = "") -> None:
        """Walk a top-level file of the sniffed format ``fmt``, named ``name`` in the repo."""
        if fmt in LENIENT and open_blob(blob).read(len(joblib_format.ZFILE_PREFIX)) == joblib_format.ZFILE_PREFIX:
            self._guarded(None, lambda: self._joblib_zfile(open_blob(blob)))
            return
        if fmt in LENIENT and _LOADER_NAME.search(name):
            # Text by content, but a loader unpickles it by name: its imports would run.
            self._guarded(None, lambda: self._loader_named_text(open_blob(blob)))
            return
        # torch.load reads a file that is not a zip with _legacy_load, whose first unpickle (the magic
        # number) is torch's weights_only unpickler on whatever pickle the file starts with.
        self._torch_named = fmt == Format.PICKLE and _TORCH_NAME.search(name) is not None
        self._guarded(None, lambda: self._walk_blob(blob, fmt, None, 0))

    def _joblib_zfile(self, stream: BinaryIO) -> None:
        """joblib < 0.9.3's container: ``ZipNumpyUnpickler`` unpickles its zlib payload."""
        payload = joblib_format.zfile_payload(stream, self.limits)
        if payload is not None:
            self._analyze(payload, None, mode=_JOBLIB_COMPAT)
            _drain(payload)

    def read_as(self, blob: Blob, fmt: str) -> None:
        """Another reading of a top-level file: pickles from offset 0 (walked leniently: bytes that
        break before importing anything run nothing), or a zip found by its end record."""
        if fmt == Format.PICKLE:
            self._guarded(None, lambda: self._lenient(open_blob(blob)))
        elif fmt in ZIP_KINDS:
            self._guarded(None, lambda: self._zip(blob, None, 0))

    def _lenient(self, stream: BinaryIO) -> None:
        self._analyze(stream, None, mode=_LENIENT)

    def _loader_named_text(self, stream: BinaryIO) -> None:
        self._analyze(stream, None, mode=_LOADER_NAMED_TEXT)

    # -- dispatch
    def _walk_blob(self, blob: Blob, fmt: str, member: str | None, depth: int) -> None:
        if fmt in ZIP_KINDS:
            self._zip(blob, member, depth)
        elif fmt == Format.SEVEN_Z:
            self._sevenzip(blob, member, depth)
        else:
            self._walk_stream(open_blob(blob), fmt, member, depth)

    def _walk_stream(self, stream: BinaryIO, fmt: str, member: str | None, depth: int) -> None:
        if fmt == Format.PICKLE:
            self._pickles(stream, member, None)
        elif fmt == Format.TORCH_LEGACY:
            self._pickles(stream, member, LEGACY_TORCH_PICKLES)
        elif fmt == Format.NUMPY:
            self._npy(stream, member)
        elif fmt == Format.TAR:
            self._tar(stream, member, depth)
        elif fmt in LENIENT:
            self._analyze(stream, member, mode=_LENIENT)
        elif fmt in INFLATABLE:
            self._compressed(stream, fmt, member, depth)
        elif fmt in _BLOB_FORMATS:
            self._walk_materialized(stream, fmt, member, depth)
        elif fmt in UNSUPPORTED_COMPRESSION:
            raise CorruptStream(f"{fmt}-compressed file: hfvet cannot decompress it, so it was not vetted")

    def _entry(self, entry: Entry, depth: int) -> None:
        stream = entry.open_stream()
        head = head_of(stream, HEAD_BYTES)
        fmt = detect_format(head, entry.size if entry.size >= 0 else _streamed_size(head))
        if _PICKLE_NAME.search(entry.name) and fmt != Format.TORCH_LEGACY:
            fmt = Format.PICKLE  # the loader unpickles it whatever it looks like
        if fmt in UNSUPPORTED_COMPRESSION:
            raise CorruptStream(f"{fmt}-compressed member: hfvet cannot decompress it, so it was not vetted")
        if fmt not in _BLOB_FORMATS and fmt not in _STREAM_FORMATS:
            return  # safetensors, gguf, executables...: nothing a pickle loader runs
        if fmt in LENIENT and not could_start_pickle(head):
            return  # an unpickler rejects the first byte before it runs anything
        member = entry.name or None
        if fmt in _BLOB_FORMATS or fmt in (Format.TAR, *INFLATABLE):
            self._check_depth(depth)
        stream = self._rest(entry, head, stream)
        if fmt in _BLOB_FORMATS and entry.open_blob:
            self._walk_blob(entry.open_blob(), fmt, member, depth + 1)
        elif fmt in _BLOB_FORMATS:
            self._walk_materialized(stream, fmt, member, depth + 1)
        else:
            self._walk_stream(stream, fmt, member, depth + 1)

    @staticmethod
    def _rest(entry: Entry, head: bytes, stream: BinaryIO) -> BinaryIO:
        """The entry's content from its first byte again, without reopening what fit in the head."""
        if len(head) < HEAD_BYTES:
            return io.BytesIO(head)  # head_of stopped at the end: the head is the whole member
        return entry.open_stream() if entry.reopenable else replayed(head, stream)

    # -- formats
    def _pickles(self, stream: BinaryIO, member: str | None, max_pickles: int | None) -> None:
        # joblib.load opens files it is given, not torch's archive records or legacy streams.
        joblib = max_pickles is None and not self._in_torch_zip
        torch_load = bool(self._in_torch_zip) or max_pickles == LEGACY_TORCH_PICKLES or (
            self._torch_named and member is None)
        result = self._analyze(stream, member, max_pickles=max_pickles, mode=ReadMode(joblib=joblib),
                               torch_load=torch_load)
        if self._in_torch_zip and member is not None and result.storages:
            self._torch_storages[member] = result.storages

    def _npy(self, stream: BinaryIO, member: str | None) -> None:
        header = numpy_format.read_header(stream)
        if header.has_object:  # an allow_pickle load unpickles the body with a plain pickle.load
            self._analyze(stream, member, mode=_NO_JOBLIB)

    def _compressed(self, stream: BinaryIO, fmt: str, member: str | None, depth: int) -> None:
        payload = decompressed(stream, fmt, self.limits)
        try:
            head = head_of(payload, HEAD_BYTES)
        except CorruptStream as exc:
            if fmt != Format.ZLIB:
                raise
            # "zlib" is sniffed from two bytes only; data that does not inflate is no loader's input.
            self.sink.add(RULE_UNREADABLE, Severity.LOW, f"looks like zlib data but does not inflate: {exc}",
                          member=member, evidence=str(exc)[:300])
            return
        entry = Entry(member or "", -1, lambda: replayed(head, payload), reopenable=False)
        self._entry(entry, depth)
        _drain(payload)  # what was not walked is still judged: a bomb is found, not sniffed past

    def _zip(self, blob: Blob, member: str | None, depth: int) -> None:
        try:
            directory = zip_reader.read_directory(blob)
        except CorruptStream as exc:
            error = str(exc)
            self._guarded(member, lambda: self._miniz_reading(blob, None, error, member, depth))
            raise
        self._walk_zip(blob, directory, member, depth)
        self._guarded(member, lambda: self._miniz_reading(blob, directory, None, member, depth))

    def _miniz_reading(self, blob: Blob, directory: list[ZipMember] | None, error: str | None,
                       member: str | None, depth: int) -> None:
        """torch.load reads the zip with miniz: where that reading differs, say so and walk what it reads."""
        found = zip_differential.compare(blob, directory, error)
        if found is None:
            return
        self.sink.add(RULE_DIFFERENTIAL, Severity.CRITICAL, found.message, member=member, evidence=found.evidence)
        for m in self._capped([zip_differential.as_member(e) for e in found.torch_only], member):
            entry = Entry(_child(member, m.name), m.size, reopenable=True,
                          open_stream=lambda m=m: zip_reader.open_member(blob, m, self.limits))  # type: ignore[misc]
            self._in_torch_zip += 1
            try:
                self._guarded(entry.name, lambda e=entry: self._entry(e, depth))  # type: ignore[misc]
            finally:
                self._in_torch_zip -= 1

    def _walk_zip(self, blob: Blob, directory: list[ZipMember], member: str | None, depth: int) -> None:
        members = self._capped(directory, member)
        is_torch = refine_zip([m.name for m in members]) == Format.PYTORCH_ZIP
        read_as_jit = self._torch_reading(blob, members, member) if is_torch else frozenset()
        opened = [m for m in zip_reader.in_data_order(members)
                  if not (m.is_dir or (is_torch and zip_reader.is_torch_storage(m.name)) or m.name in read_as_jit)]
        # Batch the header and first-buffer reads: one read per member is slow on 100k members.
        blob = zip_reader.prefetch(blob, opened, lambda m: min(m.compressed_size, READ_BUFFER))
        for m in opened:
            entry = Entry(
                _child(member, m.name), m.size,
                open_stream=lambda m=m: zip_reader.open_member(blob, m, self.limits),  # type: ignore[misc]
                reopenable=True,
                open_blob=_stored_window(blob, m),
            )
            self._in_torch_zip += is_torch
            try:
                self._guarded(entry.name, lambda e=entry: self._entry(e, depth))  # type: ignore[misc]
            finally:
                self._in_torch_zip -= is_torch
        if is_torch:  # the storages torch.load's unpickler declared, against their records
            torch_archive.check_storages(members, self._torch_storages, self.sink, member)

    def _torch_reading(self, blob: Blob, members: list[ZipMember], member: str | None) -> frozenset[str]:
        """torch's own reading (TorchScript, storage sizes, SETITEMS targets); the pickles it leaves to
        TorchScript alone. On any error, none: the generic reading then covers them all (fail closed)."""
        read: list[frozenset[str]] = []
        self._guarded(member, lambda: read.append(torch_archive.read_torch_archive(
            blob, members, self.sink, self.limits, member)))
        return read[0] if read else frozenset()

    def _sevenzip(self, blob: Blob, member: str | None, depth: int) -> None:
        from app.core.formats import sevenzip  # py7zr: loaded only when a 7z archive appears

        # Every member is extracted into memory at once (solid blocks): hold the whole cap.
        with self.memory.reserve(self.limits.expansion_cap(blob.size)):
            files = sevenzip.extract_members(open_blob(blob), self.limits, blob.size)
            for name, data in files.items():
                entry = Entry(_child(member, name), len(data), lambda d=data: io.BytesIO(d),  # type: ignore[misc]
                              reopenable=True, open_blob=lambda d=data: BytesBlob(d))  # type: ignore[misc]
                self._guarded(entry.name, lambda e=entry: self._entry(e, depth))  # type: ignore[misc]

    def _tar(self, stream: BinaryIO, member: str | None, depth: int) -> None:
        try:
            # ignore_zeros: read past a bad header block the way GNU tar does ("Skipping to next
            # header"), or members after it would be extracted by tar but never vetted here.
            archive = tarfile.open(fileobj=stream, mode="r|", ignore_zeros=True)  # noqa: SIM115 - stream owns it
            count = 0
            for info in archive:
                if (info.islnk() or info.issym()) and torch_tar.read_by_name(info.name):
                    self._linked_record(info, member)
                if not info.isfile():
                    continue
                count += 1
                if count > self.limits.max_archive_members:
                    raise LimitExceeded(f"tar archive with over {self.limits.max_archive_members} members")
                handle = archive.extractfile(info)
                kind = torch_tar.record_kind(info.name)
                if handle is not None and kind is not None:
                    name = _child(member, info.name)
                    self._guarded(name, lambda h=handle, k=kind, n=name: self._torch_records(h, k, n))  # type: ignore[misc]
                elif handle is not None:
                    entry = Entry(_child(member, info.name), info.size, lambda h=handle: h, reopenable=False)  # type: ignore[misc]
                    self._guarded(entry.name, lambda e=entry: self._entry(e, depth))  # type: ignore[misc]
        except (tarfile.TarError, EOFError) as exc:
            raise CorruptStream(f"unreadable tar archive: {exc}") from None

    def _linked_record(self, info: tarfile.TarInfo, member: str | None) -> None:
        """torch's ``legacy_load`` reads ``storages``/``pickle``... through ``tar.extract``/``extractfile``,
        which follow a link to another member (or, for a symlink, a file on disk); this walk reads regular
        members only, each by its content, so the records torch unpickles were not walked as records."""
        self.sink.add(RULE_DIFFERENTIAL, Severity.CRITICAL,
                      f"torch.load's tarfile reading follows the link {info.name!r} -> {info.linkname!r} and "
                      "unpickles what it points at as torch's records; hfvet did not read it as records",
                      member=_child(member, info.name), evidence=f"{info.name} -> {info.linkname}"[:300])

    def _torch_records(self, handle: BinaryIO, kind: str, member: str) -> None:
        """torch's legacy tar ``storages``/``tensors``: record pickles between raw bytes (see torch_tar)."""
        def one_pickle(stream: BinaryIO) -> Value | None:
            result = self._analyze(stream, member, max_pickles=1)
            if result.broken or result.limit_hit:
                raise torch_tar.RecordsEnd
            return result.value

        torch_tar.walk_records(replayed(b"", handle), kind, one_pickle, self.limits.max_archive_members)

    # -- helpers
    def _capped(self, members: list[ZipMember], member: str | None) -> list[ZipMember]:
        cap = self.limits.max_archive_members
        if len(members) > cap:
            self._limit(member, f"archive with {len(members)} members; only the first {cap} were scanned")
            return members[:cap]
        return members

    def _check_depth(self, depth: int) -> None:
        if depth >= self.limits.max_nesting:
            raise LimitExceeded(f"containers nested more than {self.limits.max_nesting} deep")

    def _walk_materialized(self, stream: BinaryIO, fmt: str, member: str | None, depth: int) -> None:
        """A zip/7z inside a stream needs random access: read it whole, under the memory budget."""
        cap = self.limits.max_decompressed_bytes
        with self.memory.reserve(cap):
            self._walk_blob(BytesBlob(read_capped(stream, cap, "nested archive")), fmt, member, depth)

    def _guarded(self, member: str | None, action: Callable[[], None]) -> None:
        try:
            action()
        except ReadBudgetExceeded:
            raise  # the file's read budget ends the whole scan; the scanner reports it once
        except CorruptStream as exc:
            self.sink.add(RULE_UNREADABLE, Severity.HIGH,
                          f"container could not be read as a loader would read it: {exc}",
                          member=member, evidence=str(exc)[:300])
        except LimitExceeded as exc:
            self._limit(member, str(exc))

    def _limit(self, member: str | None, detail: str) -> None:
        self.sink.add(RULE_LIMIT, Severity.HIGH, f"scan limit reached: {detail}; the rest was not vetted",
                      member=member, evidence=detail[:300])


def _stored_window(blob: Blob, member: zip_reader.ZipMember) -> Callable[[], Blob] | None:
    if member.method != zip_reader.STORED:
        return None
    return lambda: zip_reader.raw_blob(blob, member)


def _streamed_size(head: bytes) -> int:
    """A lower bound on a stream's size: a full head means more may follow (the sniff is cut)."""
    return len(head) + 1 if len(head) >= HEAD_BYTES else len(head)


def _child(member: str | None, name: str) -> str:
    return name if member is None else f"{member}!{name}"


def _drain(stream: BinaryIO) -> None:
    while stream.read(CHUNK):
        pass
