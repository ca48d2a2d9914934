"""picklescan as a corroborating engine, run on the bytes hfvet sniffed (never on file names).

picklescan is a denylist: it names known-dangerous imports and calls everything off its
23-name allowlist "suspicious". It reports parse failures only through its logger, so the
logger is watched while it runs (records of this thread only: vets run in a thread pool).
"""

from __future__ import annotations

import importlib.metadata
import logging
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import IO, Any, ClassVar

from picklescan import scanner as ps
from picklescan.relaxed_zipfile import RelaxedZipFile

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.blobs import BudgetBlob
from app.core.formats.detect import LEGACY_TORCH_PICKLES, PEER_ZIP_KINDS, Format
from app.core.limits import LimitExceeded
from app.core.manifest import ManifestFile
from app.core.scanners.base import ScanContext
from app.core.scanners.peers import corroboration
from app.core.scanners.peers.engine_run import EngineRun, peer_stream, reopen, run_engine
from app.core.scanners.peers.opcode_guard import broke_right_after_stop, guard_opcodes, joblib_interleaved
from app.core.scanners.peers.shared import facts_for, peer_zip
from app.core.scanners.peers.zip_plan import PlannedMember, walk_zip_members
from app.core.scanners.pickle_engine import library_packs
from app.core.scanners.pickle_scanner import PickleScanner

NAME = "picklescan"
DANGEROUS = "picklescan:dangerous-global"
SUSPICIOUS = "picklescan:suspicious-global"
UNPARSED_MEMBER = "picklescan:unparsed-member"
JOBLIB_PARTIAL = "picklescan:joblib-partial"
CHECKED = "picklescan:checked-global"
AFTER_STOP = "picklescan:after-stop"
# joblib/gzip/zlib wrappers are not handled: picklescan cannot decompress them and would
# call the compressed bytes "not a pickle" (clean). hfvet's archive scanner unwraps them.
HANDLED_FORMATS = frozenset({Format.PICKLE, Format.TORCH_LEGACY, Format.NUMPY, Format.SEVEN_Z, *PEER_ZIP_KINDS})

_LOG = logging.getLogger("picklescan")
_LOG.addHandler(logging.NullHandler())  # its records become findings; no stray stderr lines
_NOT_PICKLE = re.compile(r"^WARNING: could not parse (?P<where>.*) as pickle: (?P<why>.*)$", re.S)
_PARSE_ERROR = re.compile(r"^ERROR: parsing pickle in (?P<where>.*?): (?P<why>.*)$", re.S)
_AT_POSITION = re.compile(r": at position (?P<pos>\d+), opcode ")

StreamScan = Callable[[IO[bytes], str], Any]  # (stream, file_id) -> picklescan ScanResult


class PicklescanScanner:
    name: ClassVar[str] = NAME
    corroborates: ClassVar[str] = PickleScanner.name  # the pipeline may skip it on that engine's clean walks
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(DANGEROUS, Severity.CRITICAL, "picklescan: a pickle imports a global on its denylist "
                 "(or one it cannot resolve)", kind=RuleKind.EXECUTION),
        # picklescan's allowlist is 23 names, so real checkpoints trip "suspicious" on benign
        # globals (torch._utils._rebuild_parameter, ...). hfvet's own allowlist engine judges
        # unknown imports (pickle-unknown-global, medium); this stays evidence only.
        RuleInfo(SUSPICIOUS, Severity.INFO, "picklescan: a pickle imports a global that is on "
                 "neither of its lists", kind=RuleKind.EXECUTION),
        # picklescan denies functools.partial by name; hfvet's engine allows it only wrapping an
        # allowlisted callable, checked on every REDUCE and BUILD (library_packs.py): a partial of
        # anything else is hfvet's own pickle-unsafe-argument (critical). The hit stays as evidence.
        RuleInfo(CHECKED, Severity.INFO, "picklescan: a global on its denylist whose every use hfvet's "
                 "engine checks (what it wraps or is given must be allowlisted)", kind=RuleKind.NOTE),
        RuleInfo(UNPARSED_MEMBER, Severity.INFO, "picklescan: an archive member starts like a pickle "
                 "but does not parse (no loader unpickles it by name)", kind=RuleKind.NOTE),
        RuleInfo(JOBLIB_PARTIAL, Severity.INFO, "picklescan: stopped at the first numpy array inside "
                 "a joblib pickle (it cannot step over array bytes); the rest is hfvet's engine's",
                 kind=RuleKind.PARTIAL),
        RuleInfo(AFTER_STOP, Severity.INFO, "picklescan: read on past the pickle's STOP and stopped at the "
                 "next byte, which is no opcode (a trailing newline): no unpickler reads it", kind=RuleKind.NOTE),
        RuleInfo.limit("a stream exceeded hfvet's read, opcode, member or "
                       "decompression limits before picklescan finished"),
        RuleInfo.scan_error("picklescan could not finish (parse error, unreadable "
                            "member, library failure)"),
    )

    def handles(self, file: ManifestFile) -> bool:
        return file.format in HANDLED_FORMATS

    def wanted(self, ctx: ScanContext, earlier: Sequence[ScanOutcome]) -> str:
        return corroboration.wanted(self.corroborates, ctx, earlier)

    def version(self) -> str:
        return importlib.metadata.version("picklescan")

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        def body(budget: BudgetBlob, run: EngineRun) -> None:
            with peer_stream(ctx, budget) as stream:
                _FORMAT_SCANS[_kind(ctx.file.format)](ctx, stream, run)

        return run_engine(NAME, ctx, body)


def _kind(fmt: str) -> str:
    return Format.ZIP if fmt in PEER_ZIP_KINDS else fmt


def _scan_pickle(ctx: ScanContext, stream: IO[bytes], run: EngineRun) -> None:
    guard_opcodes(reopen(ctx, stream), ctx.file.size, ctx.limits, facts=facts_for(ctx.blob))
    _engine(run, ps.scan_pickle_bytes, stream, None, by_name=True)


def _scan_legacy_torch(ctx: ScanContext, stream: IO[bytes], run: EngineRun) -> None:
    guard_opcodes(reopen(ctx, stream), ctx.file.size, ctx.limits, max_pickles=LEGACY_TORCH_PICKLES,
                  facts=facts_for(ctx.blob))
    _engine(run, ps.scan_pytorch, stream, None, by_name=True)


def _scan_numpy(ctx: ScanContext, stream: IO[bytes], run: EngineRun) -> None:
    guard_opcodes(reopen(ctx, stream), ctx.file.size, ctx.limits, npy=True, facts=facts_for(ctx.blob))
    _engine(run, ps.scan_numpy, stream, None, by_name=True)


def _scan_zip(ctx: ScanContext, stream: IO[bytes], run: EngineRun) -> None:
    # RelaxedZipFile ignores CRC and flag bits, as torch's own zip reader does.
    # (picklescan's own zip walk logs and skips unreadable members; the shared walk fails them.)
    with peer_zip(stream, ctx.blob, RelaxedZipFile) as zf:
        walk_zip_members(zf, ctx.file.format, ctx, run, partial(_scan_member, run))


def _scan_member(run: EngineRun, planned: PlannedMember, stream: IO[bytes]) -> None:
    scan = ps.scan_pickle_bytes if planned.kind == "pickle" else ps.scan_numpy
    _engine(run, scan, stream, planned.info.filename, by_name=planned.by_name)


def _scan_7z(ctx: ScanContext, stream: IO[bytes], run: EngineRun) -> None:
    # picklescan extracts 7z members to disk and scans them whole, out of our reach: only run
    # it when the members it would extract are small enough that no limit can be crossed.
    import py7zr  # only for a 7z archive

    with py7zr.SevenZipFile(stream) as archive:
        entries = archive.list()
    if len(entries) > ctx.limits.max_archive_members:
        raise LimitExceeded(f"more than {ctx.limits.max_archive_members} archive members")
    targets = [e for e in entries if e.filename.endswith(tuple(ps._pickle_file_extensions))]
    extracted = sum(e.uncompressed for e in targets)
    if extracted > ctx.limits.max_pickle_opcodes:
        run.skipped = (f"picklescan not run: its 7z path extracts and parses {extracted} bytes of "
                       "pickle members whole, beyond what hfvet bounds safely")
        return
    stream.seek(0)
    _engine(run, ps.scan_7z_bytes, stream, None, by_name=True)


_FORMAT_SCANS: dict[str, Callable[[ScanContext, IO[bytes], EngineRun], None]] = {
    Format.PICKLE: _scan_pickle,
    Format.TORCH_LEGACY: _scan_legacy_torch,
    Format.NUMPY: _scan_numpy,
    Format.ZIP: _scan_zip,
    Format.SEVEN_Z: _scan_7z,
}


def _engine(
    run: EngineRun, scan: StreamScan, stream: IO[bytes], member: str | None, *, by_name: bool
) -> None:
    file_id = run.sink.path if member is None else f"{run.sink.path}:{member}"
    with _captured_log() as records:
        result = scan(stream, file_id)
    _record_globals(run.sink, result, member)
    known_errors = len(run.errors)
    for record in records:
        _record_log(run, record, member, by_name)
    if result.scan_err and not any(_PARSE_ERROR.match(r.getMessage()) for r in records):
        run.errors.append(f"{file_id}: picklescan reported a parse error")
    if len(run.errors) > known_errors and scan is ps.scan_pickle_bytes:
        _explain_stops(run, stream, known_errors, member)


def _explain_stops(run: EngineRun, stream: IO[bytes], known_errors: int, member: str | None) -> None:
    """picklescan's stops that are its limitation, not the file's: evidence instead of errors."""
    if joblib_interleaved(stream):
        del run.errors[known_errors:]
        run.sink.add(JOBLIB_PARTIAL, Severity.INFO, "picklescan stopped at the first numpy array of "
                     "this joblib pickle; the opcodes after it were not checked by picklescan", member=member)
        return
    new = run.errors[known_errors:]
    positions = [int(m["pos"]) for m in (_AT_POSITION.search(e) for e in new) if m]
    if len(new) == 1 and len(positions) == 1 and broke_right_after_stop(stream, positions[0]):
        del run.errors[known_errors:]
        run.sink.add(AFTER_STOP, Severity.INFO, f"picklescan read past the pickle's STOP and stopped at offset "
                     f"{positions[0]}, a byte that is no opcode: no unpickler reads it", member=member,
                     evidence=new[0][-200:])


def _record_globals(sink: FindingSink, result: Any, member: str | None) -> None:
    for found in sorted(result.globals, key=lambda g: (g.module, g.name)):
        ref = f"{found.module}.{found.name}"
        checked = library_packs.checked_per_use(ref) if found.safety is ps.SafetyLevel.Dangerous else None
        if checked is not None:
            sink.add(CHECKED, Severity.INFO, f"picklescan: dangerous import {ref}; hfvet's engine checks every "
                     f"use of it ({checked.reason})", member=member, evidence=ref)
        elif found.safety is ps.SafetyLevel.Dangerous:
            sink.add(DANGEROUS, Severity.CRITICAL, f"picklescan: dangerous import {ref}",
                     member=member, evidence=ref)
        elif found.safety is ps.SafetyLevel.Suspicious:
            sink.add(SUSPICIOUS, Severity.INFO, f"picklescan: import {ref} is not on its allowlist",
                     member=member, evidence=ref)


def _record_log(run: EngineRun, record: logging.LogRecord, member: str | None, by_name: bool) -> None:
    message = record.getMessage()
    if match := _NOT_PICKLE.match(message):
        if by_name:
            run.errors.append(f"{match['where']}: not a parseable pickle: {match['why']}")
        else:
            run.sink.add(UNPARSED_MEMBER, Severity.INFO, "picklescan: member starts like a pickle but "
                         f"does not parse ({match['why']}); usually raw tensor bytes", member=member)
    elif match := _PARSE_ERROR.match(message):
        run.errors.append(f"{match['where']}: pickle stream broken: {match['why']}")
    elif record.levelno >= logging.ERROR:
        run.errors.append(f"picklescan: {message}")


class _ThreadRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.thread = threading.get_ident()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.records.append(record)


@contextmanager
def _captured_log() -> Iterator[list[logging.LogRecord]]:
    # Parse failures exist only as log records: make sure they are emitted at all.
    if not _LOG.isEnabledFor(logging.WARNING):
        _LOG.setLevel(logging.WARNING)
    _LOG.disabled = False
    handler = _ThreadRecords()
    _LOG.addHandler(handler)
    try:
        yield handler.records
    finally:
        _LOG.removeHandler(handler)
