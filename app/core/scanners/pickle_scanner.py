"""hfvet's own pickle scanner: every pickle a loader would run, in every container."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.blobs import BudgetBlob
from app.core.formats.detect import INFLATABLE, UNSUPPORTED_COMPRESSION, ZIP_KINDS, Format
from app.core.limits import ReadBudgetExceeded
from app.core.manifest import ManifestFile
from app.core.ports import Blob, SourceError
from app.core.scanners.base import ScanContext
from app.core.scanners.pickle_engine import analysis, calls, joblib_reading, load_events, torch_trust, walk_state
from app.core.scanners.pickle_engine import torch_archive as torch_zip
from app.core.scanners.pickle_engine.walker import RULE_DIFFERENTIAL, RULE_UNREADABLE, ContainerWalker

ENGINE_VERSION = "1.0"

HANDLED_FORMATS = frozenset(
    {Format.PICKLE, Format.TORCH_LEGACY, Format.NUMPY, Format.SEVEN_Z, Format.TAR, *ZIP_KINDS, *INFLATABLE,
     *UNSUPPORTED_COMPRESSION,  # joblib reads lz4; hfvet cannot, and says so
     Format.TEXT, Format.UNKNOWN}  # walked leniently: a long first argument hides a pickle from the sniffer
)


class PickleScanner:
    name: ClassVar[str] = "hfvet-pickle"
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(RULE_DIFFERENTIAL, Severity.CRITICAL,
                 "torch.load reads other records than zipfile/tarfile show hfvet and the peer scanners: its "
                 "miniz zip reader disagrees, or a legacy-tar record is a link (torch's zip reading is walked too)",
                 kind=RuleKind.MALFORMED),
        RuleInfo(load_events.RULE_DANGEROUS, Severity.CRITICAL,
                 "pickle imports a callable that runs code, touches the system or loads more objects",
                 kind=RuleKind.EXECUTION),
        RuleInfo(load_events.RULE_UNRESOLVED, Severity.CRITICAL,
                 "pickle import whose name is only known at load time (computed STACK_GLOBAL, EXT codes)",
                 kind=RuleKind.EXECUTION),
        RuleInfo(calls.RULE_MUTATION, Severity.CRITICAL,
                 "pickle sets attributes or items on an imported module/class (attribute-injection gadget)",
                 kind=RuleKind.EXECUTION),
        RuleInfo(calls.RULE_SUSPICIOUS_CALL, Severity.CRITICAL,
                 "a non-allowlisted callable is called with a command, code, system-path or URL argument",
                 kind=RuleKind.PICKLE_CALL),
        RuleInfo(calls.RULE_UNSAFE_ARGUMENT, Severity.CRITICAL,
                 "an allowlisted callable that calls, instantiates or keeps its arguments receives a "
                 "non-allowlisted global", kind=RuleKind.EXECUTION),
        RuleInfo(calls.RULE_DYNAMIC_CALL, Severity.HIGH,
                 "pickle calls a callable it obtained at load time (getattr-style chain) or cannot resolve",
                 kind=RuleKind.PICKLE_CALL),
        RuleInfo(calls.RULE_UNKNOWN_CALL, Severity.HIGH,
                 "a load would call or instantiate a callable that is not on the allowlist", kind=RuleKind.EXECUTION),
        RuleInfo(calls.RULE_OBJECT_MUTATION, Severity.HIGH,
                 "a load would add items to, or setattr on, an object of a non-allowlisted class",
                 kind=RuleKind.EXECUTION),
        RuleInfo(analysis.RULE_BROKEN, Severity.HIGH,
                 "pickle stream is broken or truncated (everything before the break still runs)",
                 kind=RuleKind.MALFORMED_WEIGHTS),
        RuleInfo.limit("a scan limit was reached; the rest was not vetted"),
        RuleInfo(joblib_reading.RULE_JOBLIB_UNSIZED, Severity.HIGH,
                 "joblib.load would read array data hfvet cannot size from the dtype state; that reading "
                 "stops there (the plain pickle.load reading goes on)", kind=RuleKind.INCOMPLETE),
        RuleInfo(joblib_reading.RULE_JOBLIB_SIDE_FILE, Severity.HIGH,
                 "an old joblib wrapper makes joblib.load open a side file: NDArrayWrapper with numpy, pickles "
                 "allowed (medium), ZNDArrayWrapper as raw bytes (low); high when its name leaves the folder or "
                 "is computed", kind=RuleKind.UNREAD),
        RuleInfo(torch_zip.RULE_SYSTEM_OP, Severity.CRITICAL,
                 "TorchScript code or bytecode calls an operator that writes or reads files (aten::save, "
                 "aten::from_file) or reaches the network (RPC, c10d)", kind=RuleKind.EXECUTION),
        RuleInfo(torch_zip.RULE_STORAGE_SIZE, Severity.CRITICAL,
                 "a torch zip storage declares more bytes than its record holds (out-of-bounds read before "
                 "torch 2.10)", kind=RuleKind.EXECUTION),
        RuleInfo(torch_trust.RULE_SETITEM, Severity.CRITICAL,
                 "SETITEM(S) on a non-dict in a pickle torch.load reads (CVE-2026-24747; medium where only the "
                 "TorchScript unpickler reads it)", kind=RuleKind.EXECUTION),
        RuleInfo(torch_zip.RULE_VIEW, Severity.CRITICAL,
                 "a tensor in a TorchScript pickle views memory past its storage (the TorchScript unpickler "
                 "does not check sizes and strides)", kind=RuleKind.EXECUTION),
        RuleInfo(torch_zip.RULE_CUSTOM_OP, Severity.HIGH,
                 "TorchScript names an operator or TorchBind class of a native library torch does not ship "
                 "(medium for PyTorch's domain libraries)", kind=RuleKind.EXECUTION),
        RuleInfo(torch_zip.RULE_UNREADABLE_CODE, Severity.HIGH, "TorchScript code that does not parse",
                 kind=RuleKind.MALFORMED),
        RuleInfo(torch_zip.RULE_REFUSED, Severity.MEDIUM,
                 "TorchScript code with a Python-only construct torch.jit refuses (the load fails)",
                 kind=RuleKind.MALFORMED),
        RuleInfo(torch_zip.RULE_ARCHIVE, Severity.INFO, "a torch zip read as TorchScript", kind=RuleKind.NOTE),
        RuleInfo(RULE_UNREADABLE, Severity.HIGH,
                 "archive or compressed container could not be read (corrupt, encrypted, unsupported)",
                 kind=RuleKind.UNREAD),
        RuleInfo(load_events.RULE_UNKNOWN, Severity.MEDIUM,
                 "pickle imports a global that is not on the allowlist of ordinary checkpoint globals",
                 kind=RuleKind.EXECUTION),
        RuleInfo(analysis.RULE_TEXT, Severity.LOW,
                 "text that starts like pickle opcodes breaks before any call (text, not broken weights)",
                 kind=RuleKind.MALFORMED),
        RuleInfo(analysis.RULE_BROKEN_INERT, Severity.LOW,
                 "pickle stream that breaks before any import, call or BUILD: a loader fails there having run "
                 "nothing (raw bytes, a truncated header); a break after code ran is pickle-broken-stream",
                 kind=RuleKind.MALFORMED),
        RuleInfo(analysis.RULE_TRAILING, Severity.LOW, "non-pickle data follows the pickle stream (never unpickled)",
                 kind=RuleKind.MALFORMED),
        RuleInfo.scan_error("the file could not be read"),
    )

    def handles(self, file: ManifestFile) -> bool:
        return file.format in HANDLED_FORMATS

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        return self._walk(ctx, lambda walker, blob: walker.scan(blob, ctx.file.format, ctx.file.path))

    def scan_reading(self, ctx: ScanContext, fmt: str) -> ScanOutcome:
        """The file read as ``fmt`` (a pickle from offset 0, a zip by its end record), whatever it sniffs as:
        the pipeline asks for each reading a loader takes (``app.core.formats.readings``)."""
        return self._walk(ctx, lambda walker, blob: walker.read_as(blob, fmt))

    def _walk(self, ctx: ScanContext, action: Callable[[ContainerWalker, Blob], None]) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        blob = BudgetBlob(ctx.blob, ctx.limits.max_read_bytes_per_file)
        try:
            action(ContainerWalker(sink, ctx.limits), blob)
        except ReadBudgetExceeded as exc:
            sink.add(walk_state.RULE_LIMIT, Severity.HIGH, f"scan limit reached: {exc}; the rest was not vetted",
                     evidence=str(exc))
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc), sink.findings)
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)

    def version(self) -> str:
        return ENGINE_VERSION
