"""modelscan as a corroborating engine: its scanner classes run on streams hfvet chose.

modelscan dispatches by file extension and reads files from disk. Here each of its scanner
classes gets a ``Model(source, stream)`` whose format comes from hfvet's content sniffing,
with zip members fed one by one. Where modelscan itself is broken, the same engine function
is called the way its scanner class should have called it (each place says why).
"""

from __future__ import annotations

import copy
import importlib
import importlib.metadata
import importlib.util
import logging
from collections.abc import Callable, Sequence
from typing import IO, Any, ClassVar, cast

from modelscan.model import Model
from modelscan.settings import DEFAULT_SETTINGS, SupportedModelFormats
from modelscan.skip import SkipCategories

from app.core.findings import RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.blobs import BudgetBlob
from app.core.formats.detect import LEGACY_TORCH_PICKLES, PEER_ZIP_KINDS, Format
from app.core.manifest import ManifestFile
from app.core.scanners.base import ScanContext
from app.core.scanners.peers import corroboration
from app.core.scanners.peers.capped import open_capped_member
from app.core.scanners.peers.engine_run import EngineRun, peer_stream, reopen, run_engine
from app.core.scanners.peers.opcode_guard import guard_opcodes, joblib_interleaved, npy_payload_offset
from app.core.scanners.peers.shared import facts_for, peer_zip
from app.core.scanners.peers.zip_plan import PlannedMember, walk_zip_members
from app.core.scanners.pickle_scanner import PickleScanner

NAME = "modelscan"
logging.getLogger("modelscan").addHandler(logging.NullHandler())  # results become findings instead
# Not saved_model.pb / keras_metadata.pb: modelscan reads them with tensorflow's protobuf classes
# (not installed); hfvet's savedmodel and keras scanners walk them instead.
HANDLED_FORMATS = frozenset(
    {Format.PICKLE, Format.TORCH_LEGACY, Format.NUMPY, Format.KERAS, Format.HDF5, *PEER_ZIP_KINDS}
)
H5_SKIP = "H5 not inspected by modelscan: its H5 scanner needs h5py, which is not installed"

SKIPPED_INFO = "modelscan:skipped"
UNKNOWN = "modelscan:unknown"
LAMBDA = "modelscan:lambda"
FALLBACK = "modelscan:unsafe-operator"
JOBLIB_PARTIAL = "modelscan:joblib-partial"
_LEVELS = ("CRITICAL", "HIGH", "MEDIUM", "LOW")  # modelscan's IssueSeverity names, also ours

Handler = Callable[["ModelscanScanner", ScanContext, IO[bytes], EngineRun], None]


def modelscan_rules(settings: dict[str, Any]) -> tuple[RuleInfo, ...]:
    """One rule per denylist entry (``modelscan:os``, ``modelscan:builtins.eval``...)."""
    rules = {
        UNKNOWN: RuleInfo(UNKNOWN, Severity.CRITICAL, "modelscan: a pickle imports a global it cannot "
                          "resolve (names computed at load time)", kind=RuleKind.EXECUTION),
        LAMBDA: RuleInfo(LAMBDA, Severity.MEDIUM, "modelscan: a Keras model has a Lambda layer "
                         "(modelscan's own severity; hfvet's keras scanner rates it high)", kind=RuleKind.EXECUTION),
        FALLBACK: RuleInfo(FALLBACK, Severity.HIGH, "modelscan: an unsafe operator outside its "
                           "known denylist entries", kind=RuleKind.EXECUTION),
        JOBLIB_PARTIAL: RuleInfo(JOBLIB_PARTIAL, Severity.INFO, "modelscan: could not walk a joblib "
                                 "pickle past its first numpy array; the rest is hfvet's engine's",
                                 kind=RuleKind.PARTIAL),
        SKIPPED_INFO: RuleInfo(SKIPPED_INFO, Severity.INFO, "modelscan: an HDF5 file has no Keras "
                               "model config (weights only), so there is nothing to check", kind=RuleKind.NOTE),
        "limit-exceeded": RuleInfo.limit("a stream exceeded hfvet's "
                                         "limits before modelscan finished"),
        "scan-error": RuleInfo.scan_error("modelscan could not finish (parse error, "
                                          "bad member, skipped stream, library failure)"),
    }
    for level in _LEVELS:
        for module, entry in settings["unsafe_globals"][level].items():
            for name in ["*"] if entry == "*" else entry:
                rule = _denylist_rule(module, name)
                target = f"{module}.*" if name == "*" else f"{module}.{name}"
                rules.setdefault(rule, RuleInfo(rule, Severity[level], f"modelscan denylist: a pickle "
                                                f"imports {target}", kind=RuleKind.EXECUTION))
    return tuple(rules.values())


def rule_for_issue(settings: dict[str, Any], module: str, operator: str, level: str) -> tuple[str, Severity]:
    """Which denylist entry modelscan matched (it matches operator names by substring)."""
    severity = Severity[level]
    if "unknown" in module or "unknown" in operator:
        return UNKNOWN, severity
    if module == "Keras" and operator == "Lambda":
        return LAMBDA, severity
    entry = settings["unsafe_globals"].get(level, {}).get(module)
    if entry == "*":
        return _denylist_rule(module, "*"), severity
    for name in entry or ():
        if name in operator:
            return _denylist_rule(module, name), severity
    return FALLBACK, severity


def _denylist_rule(module: str, name: str) -> str:
    return f"modelscan:{module}" if name == "*" else f"modelscan:{module}.{name}"


class ModelscanScanner:
    name: ClassVar[str] = NAME
    corroborates: ClassVar[str] = PickleScanner.name  # the pipeline may skip it on that engine's clean walks
    rules: ClassVar[tuple[RuleInfo, ...]] = modelscan_rules(DEFAULT_SETTINGS)

    def __init__(self) -> None:
        # modelscan's CLI mutates nested settings; a long-lived service keeps its own copy.
        self._settings: dict[str, Any] = copy.deepcopy(DEFAULT_SETTINGS)

    def handles(self, file: ManifestFile) -> bool:
        return file.format in HANDLED_FORMATS

    def wanted(self, ctx: ScanContext, earlier: Sequence[ScanOutcome]) -> str:
        return corroboration.wanted(self.corroborates, ctx, earlier)

    def version(self) -> str:
        return importlib.metadata.version("modelscan")

    def prepare(self) -> None:
        """Import modelscan's scanners now, before any scan thread could (the pipeline calls this)."""
        try:
            load_modelscan()
        except Exception:  # noqa: BLE001 - never fails the vet: each scan then fails closed on the same import
            return

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        path = ctx.file.path
        if ctx.file.format == Format.HDF5 and importlib.util.find_spec("h5py") is None:
            return ScanOutcome.skipped(NAME, path, H5_SKIP)
        fmt = Format.ZIP if ctx.file.format in PEER_ZIP_KINDS else ctx.file.format

        def body(budget: BudgetBlob, run: EngineRun) -> None:
            with peer_stream(ctx, budget) as stream:
                _HANDLERS[fmt](self, ctx, stream, run)

        return run_engine(NAME, ctx, body)

    def _scan_pickle(self, ctx: ScanContext, stream: IO[bytes], run: EngineRun) -> None:
        guard_opcodes(reopen(ctx, stream), ctx.file.size, ctx.limits, facts=facts_for(ctx.blob))
        self._pickle_stream(_model(ctx.file.path, stream, SupportedModelFormats.PICKLE), run, None)

    def _scan_legacy_torch(self, ctx: ScanContext, stream: IO[bytes], run: EngineRun) -> None:
        # PyTorchUnsafeOpScan checks only the magic-number pickle and never the data pickle
        # (a known modelscan bypass). torch unpickles the first five, so walk all five.
        guard_opcodes(reopen(ctx, stream), ctx.file.size, ctx.limits, max_pickles=LEGACY_TORCH_PICKLES,
                      facts=facts_for(ctx.blob))
        model = _model(ctx.file.path, stream, SupportedModelFormats.PYTORCH)
        offset = 0
        for _ in range(LEGACY_TORCH_PICKLES):
            results = _scan_pickle_bytes()(model, self._settings, "pytorch", False, offset)
            _collect(run, results, None)
            if results.errors:
                return
            offset = stream.tell()

    def _scan_numpy(self, ctx: ScanContext, stream: IO[bytes], run: EngineRun) -> None:
        guard_opcodes(reopen(ctx, stream), ctx.file.size, ctx.limits, npy=True, facts=facts_for(ctx.blob))
        self._npy_stream(_model(ctx.file.path, stream, SupportedModelFormats.NUMPY), stream, run, None)

    def _scan_zip(self, ctx: ScanContext, stream: IO[bytes], run: EngineRun) -> None:
        # stdlib zipfile, as modelscan itself uses (stricter than torch about flags and CRCs).
        def scan_member(planned: PlannedMember, member: IO[bytes]) -> None:
            name = planned.info.filename
            source = f"{ctx.file.path}:{name}"
            if planned.kind == "pickle":
                self._pickle_stream(_model(source, member, SupportedModelFormats.PICKLE), run, name)
            else:
                self._npy_stream(_model(source, member, SupportedModelFormats.NUMPY), member, run, name)

        with peer_zip(stream, ctx.blob) as zf:
            walk_zip_members(zf, ctx.file.format, ctx, run, scan_member)

    def _scan_keras(self, ctx: ScanContext, stream: IO[bytes], run: EngineRun) -> None:
        # KerasLambdaDetectScan.scan() refuses to run without tensorflow, although its check
        # is plain JSON (tensorflow only supplies a list of safe TF ops, unused for Keras).
        from modelscan.scanners import KerasLambdaDetectScan  # modelscan's scanners load h5py (and numpy)

        scan = KerasLambdaDetectScan(self._settings)
        with peer_zip(stream, ctx.blob) as zf:
            configs = [i for i in zf.infolist() if i.filename == "config.json"]
            if not configs:
                run.errors.append("no config.json in the Keras archive")
            for info in configs:
                with open_capped_member(zf, info, ctx.limits.max_text_bytes) as member:
                    model = Model(f"{ctx.file.path}:config.json", member)
                    _collect(run, scan._scan_keras_config_file(model), "config.json")

    def _scan_hdf5(self, ctx: ScanContext, stream: IO[bytes], run: EngineRun) -> None:
        model = _model(ctx.file.path, stream, SupportedModelFormats.KERAS_H5)
        from modelscan.scanners import H5LambdaDetectScan

        _collect(run, H5LambdaDetectScan(self._settings).scan(model), None)

    def _pickle_stream(self, model: Model, run: EngineRun, member: str | None) -> None:
        from modelscan.scanners import PickleUnsafeOpScan

        results = PickleUnsafeOpScan(self._settings).scan(model)
        if results is not None and results.errors and joblib_interleaved(model.get_stream()):
            results.errors = []
            run.sink.add(JOBLIB_PARTIAL, Severity.INFO, "modelscan cannot walk past the first numpy array "
                         "of this joblib pickle; it was not checked by modelscan", member=member)
        _collect(run, results, member)

    def _npy_stream(self, model: Model, stream: IO[bytes], run: EngineRun, member: str | None) -> None:
        # NumpyUnsafeOpScan crashes on numpy 2 (np.lib.format._check_version is gone), which
        # would turn every benign .npy into a scan error. Same steps, public numpy API.
        offset = npy_payload_offset(stream)
        if offset is not None:
            _collect(run, _scan_pickle_bytes()(model, self._settings, "numpy", True, offset), member)


_HANDLERS: dict[str, Handler] = {
    Format.PICKLE: ModelscanScanner._scan_pickle,
    Format.TORCH_LEGACY: ModelscanScanner._scan_legacy_torch,
    Format.NUMPY: ModelscanScanner._scan_numpy,
    Format.ZIP: ModelscanScanner._scan_zip,
    Format.KERAS: ModelscanScanner._scan_keras,
    Format.HDF5: ModelscanScanner._scan_hdf5,
}


def load_modelscan() -> None:
    """Import modelscan's scanner modules, entering through their package (done once; later calls are free).

    modelscan 0.8.8's modules import each other in a loop: ``modelscan.tools.picklescanner`` imports
    ``modelscan.scanners.scan``, which runs the ``modelscan.scanners`` package, whose pickle scanner
    imports ``scan_numpy`` back from the half-initialised picklescanner: an ImportError, so a scan error
    or not depending on which module a scan thread happened to import first. Entered through the
    package, the loop closes. Not at module import: the package loads numpy and h5py (~0.15 s), which
    commands that only list rules or versions do not need.
    """
    importlib.import_module("modelscan.scanners")


def _scan_pickle_bytes() -> Callable[..., Any]:
    """modelscan's pickle walk (its package imported first, see ``load_modelscan``)."""
    load_modelscan()
    from modelscan.tools.picklescanner import scan_pickle_bytes

    return cast("Callable[..., Any]", scan_pickle_bytes)  # modelscan ships no type hints


def _model(source: str, stream: IO[bytes], fmt: Any) -> Model:
    model = Model(source, stream)
    model.set_context("formats", [fmt])
    return model


def _collect(run: EngineRun, results: Any, member: str | None) -> None:
    """Turn modelscan ScanResults into findings; its errors and skips are never dropped."""
    if results is None:
        run.errors.append("modelscan declined a stream it was given")
        return
    for issue in results.issues:
        module, operator = str(issue.details.module), str(issue.details.operator)
        rule, severity = rule_for_issue(DEFAULT_SETTINGS, module, operator, issue.severity.name)
        run.sink.add(rule, severity, f"modelscan: unsafe operator {module}.{operator} "
                     f"({issue.severity.name})", member=member, evidence=f"{module}.{operator}")
    for error in results.errors:
        if error.name() == "DEPENDENCY":
            run.skipped = f"modelscan: {error.message}"
        else:
            run.errors.append(f"modelscan {error.name()}: {error.message}")
    for skip in results.skipped:
        if skip.category is SkipCategories.MODEL_CONFIG:
            run.sink.add(SKIPPED_INFO, Severity.INFO, f"modelscan skipped it: {skip.message} "
                         "(an HDF5 file without a Keras model config holds weights only)", member=member)
        else:
            run.errors.append(f"modelscan skipped it: {skip.message}")

