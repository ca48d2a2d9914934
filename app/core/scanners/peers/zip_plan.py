"""Which zip members the peer engines see: pickles and .npy, by loader-relevant name or by content.

Never by the outer file's name; nested archives are left to hfvet's own archive walk. Each member
is fed capped and opcode-guarded, and a bad member is an error for that member only.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import IO, Literal

from app.core.formats.detect import HEAD_BYTES, Format, detect_format
from app.core.formats.zip_reader import is_torch_storage
from app.core.limits import LimitExceeded, Limits
from app.core.scanners.base import ScanContext
from app.core.scanners.peers.capped import open_capped_member
from app.core.scanners.peers.engine_run import EngineRun
from app.core.scanners.peers.opcode_guard import guard_opcodes
from app.core.scanners.peers.shared import IN_MEMORY_BYTES, facts_for, member_in_memory

# Union of picklescan's and modelscan's pickle extensions, plus torch's data.pkl.
PICKLE_NAME_SUFFIXES = (".pkl", ".pickle", ".joblib", ".dill", ".dat", ".data")
_PROTO_MAGIC = tuple(b"\x80" + bytes([v]) for v in range(6))

MemberKind = Literal["pickle", "numpy", "unreadable"]


@dataclass(frozen=True)
class PlannedMember:
    info: zipfile.ZipInfo
    kind: MemberKind
    by_name: bool  # chosen because a loader unpickles this name (not only by its bytes)
    error: str | None = None  # why an "unreadable" member could not even be sniffed


def walk_zip_members(
    zf: zipfile.ZipFile, fmt: str, ctx: ScanContext, run: EngineRun,
    scan_member: Callable[[PlannedMember, IO[bytes]], None],
) -> None:
    """Feed each planned member, capped and opcode-guarded, to ``scan_member``.

    A bad member is an error for that member and the walk goes on (modelscan's own walk
    drops the whole archive on the first bad member, a known bypass). Pickle members are
    read into memory once (guard and engine walk the same bytes); .npy members are streamed.
    """
    limits, facts = ctx.limits, facts_for(ctx.blob)
    for planned in plan_zip_members(zf, fmt, limits):
        name = planned.info.filename
        if planned.kind == "unreadable":
            run.errors.append(f"member {name} is unreadable: {planned.error}")
            continue
        check_declared(planned.info, limits)  # a bomb stops the engine: limit-exceeded, failed
        try:
            with _member_stream(zf, planned, ctx) as stream:
                opener = partial(_rewound, stream)
                guard_opcodes(opener, planned.info.file_size, limits, npy=planned.kind == "numpy",
                              facts=facts, key=f"@{planned.info.header_offset}")
                stream.seek(0)
                scan_member(planned, stream)
        except LimitExceeded:
            raise
        except Exception as exc:  # noqa: BLE001 - engines and zipfile raise many types: fail closed
            run.errors.append(f"member {name}: {type(exc).__name__}: {exc}")


@contextmanager
def _member_stream(zf: zipfile.ZipFile, planned: PlannedMember, ctx: ScanContext) -> Iterator[IO[bytes]]:
    cap = ctx.limits.max_decompressed_bytes
    with open_capped_member(zf, planned.info, cap) as stream:
        if planned.kind == "pickle" and planned.info.file_size <= IN_MEMORY_BYTES:
            with member_in_memory(stream, planned.info.file_size, ctx.budget()) as data:
                yield data
        else:
            yield stream


@contextmanager
def _rewound(stream: IO[bytes]) -> Iterator[IO[bytes]]:
    stream.seek(0)
    yield stream


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
