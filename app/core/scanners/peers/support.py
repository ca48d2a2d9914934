"""Plumbing shared by the peer engines (picklescan, modelscan) that corroborate hfvet's own.

The peer libraries parse whatever stream they are given and keep every pickle opcode in a
list, so a hostile file could exhaust memory through them. Everything here bounds what
they see: decompressed bytes per stream, opcodes per stream, and which zip members are fed
to them (chosen by content and by loader-relevant names, never by the outer file's name).
"""

from __future__ import annotations

import io
import pickletools
import posixpath
import zipfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import IO, Literal

import numpy as np

from app.core.findings import FindingSink, ScanOutcome, Severity, Status
from app.core.formats.blobs import BudgetBlob, open_blob
from app.core.formats.detect import HEAD_BYTES, Format, detect_format
from app.core.formats.zip_reader import is_torch_storage
from app.core.limits import LimitExceeded, Limits
from app.core.scanners.base import ScanContext

# Union of picklescan's and modelscan's pickle extensions, plus torch's data.pkl.
PICKLE_NAME_SUFFIXES = (".pkl", ".pickle", ".joblib", ".dill", ".dat", ".data")
_PROTO_MAGIC = tuple(b"\x80" + bytes([v]) for v in range(6))
JOBLIB_WRAPPER = "NumpyArrayWrapper"

MemberKind = Literal["pickle", "numpy", "unreadable"]
Opener = Callable[[], AbstractContextManager[IO[bytes]]]


@dataclass(frozen=True)
class PlannedMember:
    info: zipfile.ZipInfo
    kind: MemberKind
    by_name: bool  # chosen because a loader unpickles this name (not only by its bytes)
    error: str | None = None  # why an "unreadable" member could not even be sniffed


@dataclass
class EngineRun:
    """What one peer engine produced for one file: findings, errors, a hit limit."""

    sink: FindingSink
    errors: list[str] = field(default_factory=list)
    limit: str | None = None
    skipped: str | None = None  # the engine could not be run safely; the file stays unscanned

    def outcome(self) -> ScanOutcome:
        scanner, path = self.sink.scanner, self.sink.path
        if self.limit is not None:
            self.sink.add("limit-exceeded", Severity.HIGH, f"{scanner} stopped: {self.limit}")
            detail = "; ".join([self.limit, *self.errors])
            return ScanOutcome(scanner, path, Status.FAILED, tuple(self.sink.findings), detail)
        if self.errors:
            return ScanOutcome.failed(scanner, path, "; ".join(self.errors), self.sink.findings)
        if self.skipped is not None:
            return ScanOutcome(scanner, path, Status.SKIPPED, tuple(self.sink.findings), self.skipped)
        return ScanOutcome.scanned(scanner, path, self.sink.findings)


def run_engine(name: str, ctx: ScanContext, body: Callable[[BudgetBlob, EngineRun], None]) -> ScanOutcome:
    """Run ``body`` on the file's read-budgeted blob; a limit or any library failure fails closed."""
    run = EngineRun(FindingSink(ctx.file.path, name))
    try:
        body(BudgetBlob(ctx.blob, ctx.limits.max_read_bytes_per_file), run)
    except LimitExceeded as exc:
        run.limit = str(exc)
    except Exception as exc:  # noqa: BLE001 - any library failure fails closed
        run.errors.append(f"{type(exc).__name__}: {exc}")
    return run.outcome()


class CappedReader(io.RawIOBase):
    """A seekable view of a stream that ends (and records it) after ``cap`` bytes."""

    def __init__(self, inner: IO[bytes], cap: int) -> None:
        self._inner = inner
        self._cap = cap
        self.exceeded = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._inner.tell()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._inner.seek(offset, whence)

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        allowed = self._cap - self._inner.tell()
        if allowed <= 0:
            self.exceeded = self.exceeded or bool(self._inner.read(1))
            return 0
        data = self._inner.read(min(len(buffer), allowed))
        buffer[: len(data)] = data
        return len(data)


@contextmanager
def capped(inner: IO[bytes], cap: int) -> Iterator[IO[bytes]]:
    """``inner`` cut at ``cap`` bytes; leaving the block raises LimitExceeded if it was cut."""
    raw = CappedReader(inner, cap)
    try:
        yield io.BufferedReader(raw)
    finally:
        if raw.exceeded:
            raise LimitExceeded(f"a stream is longer than {cap} bytes")


@contextmanager
def open_capped_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> Iterator[IO[bytes]]:
    # zipfile never yields more than the declared size; ``cap`` bounds decompression bombs.
    with zf.open(info) as raw, capped(raw, cap) as stream:
        yield stream


def count_pickle_ops(stream: IO[bytes], max_ops: int, max_pickles: int | None = None) -> int:
    """Opcodes in back-to-back pickles (as the engines walk them), stopping past ``max_ops``.

    Parse errors end the count: the engines report those themselves.
    """
    total, pickles = 0, 0
    while max_pickles is None or pickles < max_pickles:
        if not stream.read(1):
            break
        stream.seek(-1, io.SEEK_CUR)
        try:
            for _ in pickletools.genops(stream):
                total += 1
                if total > max_ops:
                    return total
        except Exception:  # noqa: BLE001 - a broken stream is the engines' finding, not ours
            break
        pickles += 1
    return total


def reopen(ctx: ScanContext) -> Opener:
    """A second, separately budgeted pass over the file (for the opcode guard)."""
    return lambda: open_blob(BudgetBlob(ctx.blob, ctx.limits.max_read_bytes_per_file))


def joblib_interleaved(stream: IO[bytes]) -> bool:
    """Whether a pickle stream breaks after a joblib NumpyArrayWrapper.

    joblib writes each array's raw bytes right after its wrapper, inside the pickle stream:
    no opcode walker can step over them without sizing the array, so both peer engines
    stop there. That is their limitation, not the file's fault (hfvet's engine sizes them).
    """
    stream.seek(0)
    seen = False
    try:
        while stream.read(1):
            stream.seek(-1, io.SEEK_CUR)
            for _op, arg, _pos in pickletools.genops(stream):
                seen = seen or (isinstance(arg, str) and JOBLIB_WRAPPER in arg)
    except Exception:  # noqa: BLE001 - the break itself is what we are asking about
        return seen
    return False


def guard_opcodes(
    open_stream: Opener, size: int, limits: Limits, *, npy: bool = False, max_pickles: int | None = None
) -> None:
    """Refuse streams whose opcode list would not fit in memory in the engines.

    Each opcode takes at least one byte, so only streams longer than the opcode limit need
    counting. ``npy``: the pickle is the payload after a .npy header (none for plain arrays).
    """
    if size <= limits.max_pickle_opcodes:
        return
    with open_stream() as stream:
        if npy and npy_payload_offset(stream) is None:
            return
        if count_pickle_ops(stream, limits.max_pickle_opcodes, max_pickles) > limits.max_pickle_opcodes:
            raise LimitExceeded(f"more than {limits.max_pickle_opcodes} pickle opcodes in one stream")


def npy_payload_offset(stream: IO[bytes]) -> int | None:
    """Offset of the pickled payload of an object-dtype .npy, or None for plain arrays.

    Uses numpy's public header readers (literal_eval only; no data is loaded).
    """
    start = stream.tell()
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        _shape, _order, dtype = np.lib.format.read_array_header_1_0(stream)
    elif version in ((2, 0), (3, 0)):
        _shape, _order, dtype = np.lib.format.read_array_header_2_0(stream)
    else:
        raise ValueError(f"unsupported .npy version {version}")
    return stream.tell() - start if dtype.hasobject else None


def walk_zip_members(
    zf: zipfile.ZipFile, fmt: str, limits: Limits, run: EngineRun,
    scan_member: Callable[[PlannedMember, IO[bytes]], None],
) -> None:
    """Feed each planned member, capped and opcode-guarded, to ``scan_member``.

    A bad member is an error for that member and the walk goes on (modelscan's own walk
    drops the whole archive on the first bad member, a known bypass).
    """
    for planned in plan_zip_members(zf, fmt, limits):
        name = planned.info.filename
        if planned.kind == "unreadable":
            run.errors.append(f"member {name} is unreadable: {planned.error}")
            continue
        opener = partial(open_capped_member, zf, planned.info, limits.max_decompressed_bytes)
        check_declared(planned.info, limits)  # a bomb stops the engine: limit-exceeded, failed
        try:
            guard_opcodes(opener, planned.info.file_size, limits, npy=planned.kind == "numpy")
            with opener() as stream:
                scan_member(planned, stream)
        except LimitExceeded:
            raise
        except Exception as exc:  # noqa: BLE001 - engines and zipfile raise many types: fail closed
            run.errors.append(f"member {name}: {type(exc).__name__}: {exc}")


def check_declared(info: zipfile.ZipInfo, limits: Limits) -> None:
    """DecompressionBomb for a member whose declared sizes break the limits.

    zipfile never yields more than the declared size, so this bounds what the engines read.
    """
    if info.compress_type != zipfile.ZIP_STORED:
        limits.check_expansion(info.file_size, info.compress_size, f"member {info.filename!r}", declared=True)


def plan_zip_members(zf: zipfile.ZipFile, fmt: str, limits: Limits) -> Iterator[PlannedMember]:
    """Members the peer engines should see: pickles and .npy by name or by content."""
    infos = zf.infolist()
    if len(infos) > limits.max_archive_members:
        raise LimitExceeded(f"more than {limits.max_archive_members} archive members")
    for info in infos:
        if info.is_dir() or (fmt == Format.PYTORCH_ZIP and is_torch_storage(info.filename)):
            continue
        planned = _plan_member(zf, info)
        if planned is not None:
            yield planned


def _plan_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> PlannedMember | None:
    name = info.filename.lower()
    if posixpath.basename(name) == "data.pkl" or name.endswith(PICKLE_NAME_SUFFIXES):
        return PlannedMember(info, "pickle", by_name=True)
    if name.endswith(".npy"):
        return PlannedMember(info, "numpy", by_name=True)
    try:
        with zf.open(info) as member:
            head = member.read(HEAD_BYTES)
    except Exception as exc:  # noqa: BLE001 - zipfile raises many types; the caller fails closed
        return PlannedMember(info, "unreadable", by_name=False, error=f"{type(exc).__name__}: {exc}")
    fmt = detect_format(head, info.file_size)
    if fmt in (Format.PICKLE, Format.TORCH_LEGACY) or head.startswith(_PROTO_MAGIC):
        return PlannedMember(info, "pickle", by_name=False)
    if fmt == Format.NUMPY:
        return PlannedMember(info, "numpy", by_name=False)
    return None  # nested archives are walked by hfvet's archive scanner, as neither engine does

