"""vet(): the one path from a Source to a Report, shared by CLI, API and workers."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from app.core.closure import ClosureItem, closure_from
from app.core.findings import Finding, RuleInfo, RuleKind, ScanOutcome, Severity, Status
from app.core.formats.blobs import SourceBlob
from app.core.formats.detect import HEAD_BYTES, Format, detect_format
from app.core.formats.readings import Reading, Readings, readings_of
from app.core.formats.side_files import side_file_format
from app.core.formats.sniff import refine_format
from app.core.limits import Limits
from app.core.loaders.loader_map import named_code
from app.core.manifest import Manifest, ManifestFile
from app.core.membudget import MemoryBudget, process_budget
from app.core.ports import DecideFn, ProgressFn, RepoCheck, SignatureAwareDecide, SignatureStep, Source, SourceError
from app.core.provenance.signature_findings import signature_findings
from app.core.readcache import CachingSource
from app.core.repo_refs import MAX_REFERENCES, TOO_MANY_RULE, references_from, too_many_references
from app.core.report import FileReport, Report, Stats
from app.core.scanners.base import SKIPPED, Corroborating, PeersMode, Preparing, ReadsAs, ScanContext, Scanner
from app.core.scanners.text_rules.text_lines import decode_text
from app.core.signature import SignatureCheck, listed_by_hub
from app.core.tensor_layout import TensorLayout
from app.core.verdict import Decision, interim_decision

NAME = "pipeline"
RULE_UNSCANNED = "unscanned"
RULE_READ_ERROR = "read-error"
RULE_VET_TIMEOUT = "vet-timeout"
RULE_SYMLINK = "symlink"
RULE_POLYGLOT = "format-polyglot"
# Emitted by the pipeline itself rather than by a scanner (scan-error is ScanOutcome.failed's).
PIPELINE_RULES = (
    RuleInfo(RULE_UNSCANNED, Severity.MEDIUM, "no scanner handles the file's format, or a scanner skipped it: "
             "it was not (fully) vetted", kind=RuleKind.INCOMPLETE),
    RuleInfo(RULE_READ_ERROR, Severity.HIGH, "the file could not be read", kind=RuleKind.INCOMPLETE),
    RuleInfo.scan_error("a scanner could not finish (what it found before failing is kept)"),
    RuleInfo(RULE_VET_TIMEOUT, Severity.HIGH, "the vet ran past its deadline (`--timeout`, `HFVET_VET_DEADLINE`) "
             "before the file was scanned", kind=RuleKind.PARTIAL),
    RuleInfo(RULE_POLYGLOT, Severity.HIGH,
             "the file is well-formed in two formats (a safetensors or tar file that is also a pickle, a pickle "
             "with a zip appended): loaders disagree on what it holds; every reading is vetted",
             kind=RuleKind.MALFORMED),
    RuleInfo(TOO_MANY_RULE, Severity.HIGH,
             f"the repo names more than {MAX_REFERENCES} other repos and revisions (configs' auto_map and "
             "custom_pipelines, adapters, code, cards): more than a gate answer judges, so it cannot be approved",
             kind=RuleKind.REFERENCE),
    RuleInfo(RULE_SYMLINK, Severity.INFO,
             "a local file reached through a symlink (the message names it; one leaving the snapshot is `read-error`)",
             kind=RuleKind.NOTE),
)


def default_decide(_m: Manifest, findings: list[Finding], files: list[FileReport]) -> Decision:
    return interim_decision(findings, [f.path for f in files if not f.scanned])


@dataclass(frozen=True)
class FileResult:
    report: FileReport
    findings: list[Finding]


@dataclass(frozen=True)
class VetOptions:
    """How one vet runs (on the model of pip-audit's ``AuditOptions``); what it judges is ``vet``'s arguments.

    ``started`` (time.monotonic()) is when the vet began, if before the ``vet`` call: the budget
    ``limits.max_vet_seconds`` then also covers what the caller did first (listing a hub manifest).
    ``peers``: ``auto`` lets each corroborating engine skip files another engine walked clean, ``always``
    runs them (``Corroborating`` in ``app.core.scanners.base``). ``memory``: None, the process-wide budget.
    """

    limits: Limits | None = None  # None: the defaults
    workers: int = 4
    peers: PeersMode = "auto"
    memory: MemoryBudget | None = None
    started: float | None = None


def vet(
    source: Source,
    scanners: Sequence[Scanner],
    *,
    decide: DecideFn = default_decide,
    options: VetOptions = VetOptions(),  # frozen: one shared default is safe
    progress: ProgressFn | None = None,
    repo_checks: Sequence[RepoCheck] = (),
    signature: SignatureStep | None = None,
) -> Report:
    """Vet ``source``; ``signature`` checks the repo's vendor signature first (``report.signature``), and
    ``decide`` sees it when it is a ``SignatureAwareDecide`` (the policy engine's is)."""
    started = time.monotonic() if options.started is None else options.started
    limits, workers, peers = options.limits or Limits(), options.workers, options.peers
    memory = options.memory or process_budget(limits)  # shared with every other vet in the process
    cached = CachingSource(source)
    manifest = cached.manifest()

    deadline = started + limits.max_vet_seconds
    code = _named_code(cached, manifest, limits)
    signed = _check_signature(signature, source, manifest)

    def one(file: ManifestFile) -> FileResult:
        if time.monotonic() > deadline:
            result = _timed_out(file, limits.max_vet_seconds)
        else:
            result = scan_file(cached, manifest, file, scanners, limits, memory, peers, code)
        result = FileResult(replace(result.report, bytes_read=cached.forget(file.path)), result.findings)
        if progress:
            progress(result.report, cached.bytes_read)
        return result

    if min(workers, len(manifest.files)) > 1:
        _prepare(scanners)  # a lone scan thread imports in its own fixed order; two could race
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(one, manifest.files))
    findings = [f for r in results for f in r.findings] + [f for check in repo_checks for f in check(manifest)]
    findings += signature_findings(signed, listed_by_hub(manifest.files))
    references = references_from(findings)
    findings += too_many_references(references, NAME)
    files = [r.report for r in results]
    decision = decide(manifest, findings, files) if signed is None else _decide_signed(decide, manifest, findings,
                                                                                      files, signed)
    stats = Stats(len(files), manifest.total_bytes, source.bytes_read, round(time.monotonic() - started, 3))
    return Report(
        repo=manifest.identity.repo_id,
        revision=manifest.identity.revision,
        decision=decision,
        findings=tuple(findings),
        files=tuple(files),
        stats=stats,
        scanners={s.name: s.version() for s in scanners},
        identity=dict(manifest.identity.facts),
        references=references,
        closure=closure_from(findings),
        signature=signed,
    )


def _check_signature(step: SignatureStep | None, source: Source, manifest: Manifest) -> SignatureCheck | None:
    """The signature step's check; a step that fails is an ``invalid`` signature, never a pass."""
    if step is None:
        return None
    try:
        return step(source, manifest)
    except Exception as exc:  # noqa: BLE001 - fail closed on a bug or a hostile input the check missed
        return SignatureCheck(state="invalid", problem=f"the signature check failed: {type(exc).__name__}: {exc}")


def _decide_signed(decide: DecideFn, manifest: Manifest, findings: list[Finding], files: list[FileReport],
                   signed: SignatureCheck) -> Decision:
    """``decide`` with the signature check when it takes one (``make_decide``'s does); others judge findings."""
    if isinstance(decide, SignatureAwareDecide):
        return decide.with_signature(manifest, findings, files, signed)
    return decide(manifest, findings, files)


def _named_code(source: Source, manifest: Manifest, limits: Limits) -> Mapping[str, tuple[ClosureItem, ...]]:
    """Which repo files configs name as code a runtime imports (the loader map), read once, up front."""
    def read(path: str) -> str | None:
        try:
            return decode_text(_read_other(source, manifest, path, limits))
        except Exception:  # noqa: BLE001 - an unreadable config is its own scanners' finding
            return None
    return named_code([f.path for f in manifest.files], read, manifest.identity.repo_id)


def _prepare(scanners: Sequence[Scanner]) -> None:
    """Let each scanner import what it needs once, in list order, on this thread before the scan threads
    start: an import raced by scan threads (modelscan's circular one) could fail in one run and not the next.
    Skipped for a single scan thread, which spares a one-file scan numpy's and h5py's start-up."""
    for scanner in scanners:
        if isinstance(scanner, Preparing):
            scanner.prepare()


def scan_file(
    source: Source,
    manifest: Manifest,
    file: ManifestFile,
    scanners: Sequence[Scanner],
    limits: Limits,
    memory: MemoryBudget | None = None,
    peers: PeersMode = "auto",
    runtime_code: Mapping[str, tuple[ClosureItem, ...]] | None = None,
) -> FileResult:
    result = _scan_file(source, manifest, file, scanners, limits, memory, peers, runtime_code)
    if file.link is None:
        return result
    note = Finding(file.path, NAME, RULE_SYMLINK, Severity.INFO, f"reached through a symlink: {file.link}")
    return FileResult(result.report, [note, *result.findings])


def _scan_file(
    source: Source,
    manifest: Manifest,
    file: ManifestFile,
    scanners: Sequence[Scanner],
    limits: Limits,
    memory: MemoryBudget | None,
    peers: PeersMode,
    runtime_code: Mapping[str, tuple[ClosureItem, ...]] | None = None,
) -> FileResult:
    blob = SourceBlob(source, file.path, file.size)
    try:
        source.size(file.path)  # the source refuses an entry it will not serve, even one listed as empty
        head = blob.read(0, HEAD_BYTES)
        fmt = refine_format(blob, detect_format(head, file.size))
        fmt = side_file_format(file.path, head, file.size, fmt, manifest.files,
                               lambda path: SourceBlob(_uncached(source), path), limits)
        readings = readings_of(file.path, head, file.size, blob, fmt)
    except Exception as exc:  # noqa: BLE001 - an unreadable file is a finding, not a crash
        return _unreadable(file, exc)
    entry = file.with_format(fmt)
    ctx = ScanContext(entry, blob, limits, manifest.identity, manifest.files, memory,
                      lambda path: _read_other(source, manifest, path, limits), runtime_code,
                      peers, 1 + len(readings.extra))
    outcomes, engines = _run_scanners(ctx, [s for s in scanners if _handles(s, entry)])
    if not outcomes:
        return _no_scanner(entry)
    again = [_run_reading(s, ctx, r) for r in readings.extra for s in scanners if isinstance(s, ReadsAs)]
    findings = ([f for o in outcomes for f in o.findings] + [f for o in again for f in o.findings]
                + _skip_notes(entry, outcomes) + _polyglot(entry, readings))
    scanned = all(o.status is Status.SCANNED for o in (*outcomes, *again))
    layout = next((o.layout for o in outcomes if o.layout is not None), None)
    return FileResult(_file_report(entry, scanned, engines, layout), findings)


def _run_scanners(ctx: ScanContext, handling: list[Scanner]) -> tuple[list[ScanOutcome], dict[str, str]]:
    """Each scanner's outcome, in order; a ``Corroborating`` one runs only when it says it is wanted.

    Returns the outcomes and, for each corroborating scanner that handles the file, whether it ran and why.
    """
    outcomes: list[ScanOutcome] = []
    engines: dict[str, str] = {}
    for scanner in handling:
        if isinstance(scanner, Corroborating):
            # hfvet's other scanners only: every peer gets the same decision, whatever another peer said.
            engines[scanner.name] = scanner.wanted(ctx, [o for o in outcomes if o.scanner not in engines])
            if engines[scanner.name].startswith(SKIPPED):
                continue
        outcomes.append(_run(scanner, ctx))
    return outcomes, engines


def _uncached(source: Source) -> Source:
    """Where to read another file from while scanning this one: past the per-file cache."""
    return source.uncached if isinstance(source, CachingSource) else source


def _read_other(source: Source, manifest: Manifest, path: str, limits: Limits) -> bytes:
    """Another listed file, whole: what a scanner needs to follow an import (small text files only)."""
    entry = next((f for f in manifest.files if f.path == path), None)
    if entry is None or entry.size > limits.max_text_bytes:
        raise SourceError(f"{path}: not a listed file within the text limit")
    return SourceBlob(source, path, entry.size).read(0, entry.size)

def _run_reading(scanner: ReadsAs, ctx: ScanContext, reading: Reading) -> ScanOutcome:
    """The file once more, as ``reading`` reads it; each finding says which reading it is from."""
    try:
        outcome = scanner.scan_reading(ctx, reading.format)
    except Exception as exc:  # noqa: BLE001 - fail closed on any scanner bug
        outcome = ScanOutcome.failed(scanner.name, ctx.file.path, f"{type(exc).__name__}: {exc}")
    said = f"read as {reading.format} by {reading.loader}: "
    return replace(outcome, findings=tuple(replace(f, message=said + f.message) for f in outcome.findings))


def _polyglot(entry: ManifestFile, readings: Readings) -> list[Finding]:
    valid = readings.valid_formats()
    if len(valid) < 2:
        return []
    loaders = "; ".join(f"as {r.format}: {r.loader}" for r in readings.extra if r.valid)
    return [Finding(entry.path, NAME, RULE_POLYGLOT, Severity.HIGH,
                    f"the file is well-formed as {' and as '.join(valid)} ({loaders}); each reading was vetted",
                    evidence=" + ".join(valid))]


def _skip_notes(entry: ManifestFile, outcomes: list[ScanOutcome]) -> list[Finding]:
    """A skip is a finding too, so that a severity threshold never reads a skipped file as clean."""
    return [Finding(entry.path, NAME, RULE_UNSCANNED, Severity.MEDIUM,
                    f"{o.scanner} skipped the file: {o.detail}; it was not fully vetted")
            for o in outcomes if o.status is Status.SKIPPED]


def _no_scanner(entry: ManifestFile) -> FileResult:
    if entry.format == Format.EMPTY:
        return FileResult(_file_report(entry, True), [])  # zero bytes: nothing a loader could run
    finding = Finding(entry.path, NAME, RULE_UNSCANNED, Severity.MEDIUM,
                      f"no scanner handles format {str(entry.format)!r}; the file was not vetted")
    return FileResult(_file_report(entry, False), [finding])


def _timed_out(file: ManifestFile, budget: float) -> FileResult:
    finding = Finding(file.path, NAME, RULE_VET_TIMEOUT, Severity.HIGH,
                      f"the vet ran past its {budget:g}s budget (--timeout, HFVET_VET_DEADLINE) before this "
                      "file was scanned")
    return FileResult(_file_report(file, False), [finding])


def _handles(scanner: Scanner, entry: ManifestFile) -> bool:
    try:
        return scanner.handles(entry)
    except Exception:  # noqa: BLE001 - a scanner that cannot decide must still look
        return True


def _run(scanner: Scanner, ctx: ScanContext) -> ScanOutcome:
    try:
        return scanner.scan(ctx)
    except Exception as exc:  # noqa: BLE001 - fail closed on any scanner bug
        return ScanOutcome.failed(scanner.name, ctx.file.path, f"{type(exc).__name__}: {exc}")


def _unreadable(file: ManifestFile, exc: Exception) -> FileResult:
    finding = Finding(file.path, NAME, RULE_READ_ERROR, Severity.HIGH,
                      f"could not read the file: {type(exc).__name__}: {exc}")
    return FileResult(_file_report(file.with_format(Format.UNREADABLE), False), [finding])


def _file_report(entry: ManifestFile, scanned: bool, engines: dict[str, str] | None = None,
                 layout: TensorLayout | None = None) -> FileReport:
    return FileReport(entry.path, entry.size, entry.sha256, entry.blob_id, entry.format, scanned, engines or {},
                      layout=layout)
