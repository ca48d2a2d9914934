"""Remote code: ``auto_map`` in config files and every shipped ``*.py``, analysed without running it.

Capability and threat indicator are correlated per file, as guarddog does: a network fetch
plus an exec of anything not constant in the same module is critical; a fetch beside a fixed
program (``ffmpeg`` with a constant argv) with no data flow between them is high, for a human
to look at, so that ordinary processors are not rejected. One dangerous capability on its own
is high at load time (every method the loaders call, see ``python_code.load_time``) and medium
in other methods; plain modelling code is a low "code present" finding. Calls into the repo's
other modules at load time carry what those do; ``setup.py`` and in-tree build backends count
as run (pip runs them).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.detect import Format
from app.core.limits import LimitExceeded
from app.core.loaders.class_ref import ClassRef
from app.core.loaders.loader_map import file_code, named_code
from app.core.manifest import ManifestFile
from app.core.ports import SourceError
from app.core.scanners.base import ScanContext
from app.core.scanners.python_code import bandit_check
from app.core.scanners.python_code import repo_modules as rm
from app.core.scanners.python_code.auto_map import CONFIG_NAMES, class_refs
from app.core.scanners.python_code.effects import ModuleContext, Observation, Summary, analyse, summarize
from app.core.scanners.python_code.modern_syntax import parse_module
from app.core.scanners.text_rules.text_lines import decode_text, evidence, read_whole

H, M = Severity.HIGH, Severity.MEDIUM
# kind -> (severity at import/construction time, severity inside other functions)
SEVERITIES: dict[str, tuple[Severity, Severity]] = {
    "process": (H, M), "process-decoded": (H, H), "process-fetched": (Severity.CRITICAL,) * 2,
    "exec": (H, M), "exec-decoded": (H, H), "exec-fetched": (Severity.CRITICAL,) * 2,
    "network": (H, M), "foreign-repo": (M, M), "foreign-remote-code": (H, H),
    "persistence": (H, H), "write-outside": (M, M), "obfuscation": (H, H), "blob": (M, M),
    "deserialize": (H, M), "native-code": (H, M), "dynamic-repo": (M, M), "dynamic-remote-code": (M, M),
}
LABELS = {
    "process": "process spawn", "process-decoded": "process spawn of decoded data",
    "process-fetched": "process spawn of downloaded data", "exec": "dynamic code execution",
    "exec-decoded": "exec of decoded/obfuscated data", "exec-fetched": "runs downloaded code/data",
    "network": "network access", "foreign-repo": "loads another repo",
    "foreign-remote-code": "loads another repo's remote code", "persistence": "writes a persistence location",
    "write-outside": "writes outside the model directory", "obfuscation": "obfuscated name",
    "blob": "long encoded blob", "deserialize": "unsafe deserialization", "native-code": "loads native code",
    "dynamic-repo": "loads a repo chosen at run time", "dynamic-remote-code": "trust_remote_code chosen at run time",
}
RUNS_CODE = {"process", "process-decoded", "process-fetched", "exec", "exec-decoded", "exec-fetched",
             "native-code"}
FETCHES = {"network", "foreign-repo", "foreign-remote-code"}
HIDES = {"blob", "obfuscation"}
# (capability, threat indicator, why): both in one file -> critical. Direct data flows
# (exec of downloaded bytes) are already critical on their own, see SEVERITIES.
CORRELATIONS = (
    (FETCHES, RUNS_CODE, "fetches data from the network and runs code"),
    (HIDES, RUNS_CODE, "hides data and runs code"),
    ({"persistence"}, FETCHES | HIDES, "writes a persistence location and fetches or hides data"),
)
PY_SUFFIXES = (".py", ".pyw")
PYPROJECT = "pyproject.toml"
INSTALL_SCRIPTS = {"setup.py"}
MAX_PER_KIND = 20  # findings of one kind per file; the rest are counted in one summary finding


class RemoteCodeScanner:
    name: ClassVar[str] = "remote-code"
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo("remote-code", Severity.LOW, "Python code in the repo: trust_remote_code would run it",
                 kind=RuleKind.REMOTE_CODE),
        RuleInfo("remote-code-dangerous", Severity.CRITICAL,
                 "code spawns processes, execs decoded/downloaded data, persists or is obfuscated "
                 "(high alone at import time; critical when a capability meets an indicator)",
                 kind=RuleKind.DANGEROUS_CODE),
        RuleInfo("remote-code-suspicious", Severity.MEDIUM,
                 "risky call inside a method: process, network, exec, unsafe load, another repo, blob",
                 kind=RuleKind.REMOTE_CODE),
        RuleInfo("remote-code-unlinked", Severity.HIGH,
                 "network access and a fixed program/library in the same file with no data flow between them: "
                 "review, not reject (a processor that downloads images and runs ffmpeg)", kind=RuleKind.EXECUTION),
        RuleInfo("remote-code-bandit", Severity.MEDIUM, "bandit check (medium+ severity and confidence)",
                 kind=RuleKind.REMOTE_CODE),
        RuleInfo("install-time-code", Severity.LOW,
                 "setup.py or an in-tree build backend: `pip install` runs all of it (analysed as load time)",
                 kind=RuleKind.INSTALL),
        RuleInfo("in-tree-build-backend", Severity.MEDIUM,
                 "pyproject.toml builds with a backend from the repo itself (backend-path): pip runs repo code",
                 kind=RuleKind.INSTALL),
        RuleInfo("auto-map", Severity.LOW, "config auto_map: trust_remote_code would import repo code",
                 kind=RuleKind.REMOTE_CODE),
        RuleInfo("auto-map-external", Severity.HIGH, "auto_map pulls code from another repo (repo--module)",
                 kind=RuleKind.DANGEROUS_CODE),
        RuleInfo("auto-map-missing-module", Severity.MEDIUM, "auto_map names a module file the repo lacks",
                 kind=RuleKind.REMOTE_CODE),
        RuleInfo("auto-map-malformed", Severity.MEDIUM, "auto_map entry is not a valid class reference",
                 kind=RuleKind.REMOTE_CODE),
        RuleInfo.limit("file larger than the text limit: not analysed"),
        RuleInfo.scan_error("Python that does not parse, or a config that is not JSON"),
    )

    def handles(self, file: ManifestFile) -> bool:
        if file.path.lower().endswith(PY_SUFFIXES):
            return True  # whatever its bytes look like: Python would still import it
        base = posixpath.basename(file.path)
        return (base in CONFIG_NAMES or base == PYPROJECT) and file.format == Format.TEXT

    def version(self) -> str:
        return f"1 (bandit {bandit_check.version()})"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        python = ctx.file.path.lower().endswith(PY_SUFFIXES)
        try:
            data = read_whole(ctx.blob, ctx.limits.max_text_bytes)
        except LimitExceeded as exc:
            sink.add("limit-exceeded", Severity.HIGH, str(exc))
            if python:
                sink.add("remote-code", Severity.LOW, "Python code present (too large to analyse)")
            return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)
        if python:
            return self._scan_python(ctx, sink, data)
        if posixpath.basename(ctx.file.path) == PYPROJECT:
            return self._scan_pyproject(ctx, sink, data)
        return self._scan_config(ctx, sink, data)

    def _scan_pyproject(self, ctx: ScanContext, sink: FindingSink, data: bytes) -> ScanOutcome:
        backend = rm.build_backend(data)
        if backend is not None:
            sink.add("in-tree-build-backend", Severity.MEDIUM,
                     f"`pip install` of this repo imports build backend {backend.module} from the repo "
                     f"(backend-path {list(backend.paths)}) and runs it",
                     evidence=f"{ctx.file.path}: build-backend = {backend.module}")
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)

    # -- config files -------------------------------------------------------------------------

    def _scan_config(self, ctx: ScanContext, sink: FindingSink, data: bytes) -> ScanOutcome:
        try:
            config = json.loads(decode_text(data))
        except (ValueError, RecursionError) as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, f"not valid JSON: {exc}", sink.findings)
        refs = class_refs(config)
        present = {f.path for f in ctx.all_files}
        for ref in refs:
            self._check_ref(ctx, sink, ref, present)
        local = sorted({r.raw for r in refs if not r.problem and not r.repo})
        if local:
            sink.add("auto-map", Severity.LOW, "trust_remote_code would import code from this repo",
                     evidence=f"{ctx.file.path}: " + ", ".join(local)[:300])
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)

    def _check_ref(self, ctx: ScanContext, sink: FindingSink, ref: ClassRef, present: set[str]) -> None:
        where = f"{ctx.file.path}: {ref.key} = {ref.raw}"
        if ref.problem:
            sink.add("auto-map-malformed", Severity.MEDIUM, ref.problem, evidence=where)
        elif ref.repo and ref.repo != ctx.identity.repo_id:
            sink.add("auto-map-external", Severity.HIGH,
                     f"code comes from another repo, {ref.repo}, which this vet does not cover",
                     evidence=where)
        elif present and not any(p in present for p in ref.module_paths(ctx.file.path)):
            sink.add("auto-map-missing-module", Severity.MEDIUM,
                     f"module {ref.module} is not in the repo: the loader would fail or look elsewhere",
                     evidence=where)

    # -- Python files -------------------------------------------------------------------------

    def _scan_python(self, ctx: ScanContext, sink: FindingSink, source: bytes) -> ScanOutcome:
        if not source.strip():
            return ScanOutcome.scanned(self.name, ctx.file.path, [])
        lines = source.decode("utf-8", errors="replace").splitlines()
        sink.add("remote-code", Severity.LOW,
                 "Python code present: trust_remote_code (auto_map) or a user running it would execute it")
        try:
            context = _module_context(ctx, source)
            if context.install_time:
                sink.add("install-time-code", Severity.LOW,
                         "`pip install` runs this file: every function in it counts as load time")
            observations = analyse(source, ctx.identity.repo_id, context)
            issues = bandit_check.bandit_issues(ctx.file.path, source)
        except (SyntaxError, ValueError, RecursionError, MemoryError, bandit_check.BanditError) as exc:
            detail = f"cannot parse as Python: {type(exc).__name__}: {exc}"
            return ScanOutcome.failed(self.name, ctx.file.path, detail, sink.findings)
        _report_observations(sink, observations, lines)
        _report_correlations(sink, observations, lines)
        flagged = {o.line for o in observations}
        unflagged = [i for i in issues if i.line not in flagged]  # no second word on a line
        for issue in unflagged[:MAX_PER_KIND]:
            severity = _bandit_severity([issue])
            sink.add("remote-code-bandit", severity, f"bandit {issue.test_id} {issue.test_name}: {issue.text}",
                     evidence=_evidence(ctx.file.path, lines, issue.line))
        if len(unflagged) > MAX_PER_KIND:
            rest = unflagged[MAX_PER_KIND:]
            sink.add("remote-code-bandit", _bandit_severity(rest), f"{len(rest)} more bandit issues (not listed)")
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)


def _module_context(ctx: ScanContext, source: bytes) -> ModuleContext:
    """Shipped extension modules, install-time status and the helper modules this one imports."""
    files = ctx.all_files
    present = {f.path for f in files}
    native = rm.native_modules(files)
    install = posixpath.basename(ctx.file.path) in INSTALL_SCRIPTS or ctx.file.path in _backend_files(ctx, present)
    helpers: dict[str, Summary] = {}
    if ctx.read_other is not None:
        tree = parse_module(source)
        for key, path in rm.helper_imports(tree, ctx.file.path, present).items():
            summary = _helper_summary(ctx.read_other, ctx.identity.repo_id, path, native)
            if summary:
                helpers[key] = summary
    return ModuleContext(ctx.identity.repo_id, native, install, helpers, _runtime_roots(ctx))


def _runtime_roots(ctx: ScanContext) -> tuple[tuple[str, str], ...]:
    """What runtimes call in this module while loading the repo (the loader map's code items)."""
    paths = [f.path for f in ctx.all_files]
    named = ctx.named_code
    if named is None:  # a scan outside the pipeline: read the configs here
        named = named_code(paths, _text_reader(ctx), ctx.identity.repo_id)
    items = [*file_code(ctx.file.path, paths, ctx.identity.repo_id), *named.get(ctx.file.path, ())]
    return tuple((pattern, f"{item.surface} calls it ({item.gate})") for item in items
                 for pattern in (item.runs or ("*.__init__",)))


def _text_reader(ctx: ScanContext) -> Callable[[str], str | None]:
    def read(path: str) -> str | None:
        if ctx.read_other is None:
            return None
        try:
            return decode_text(ctx.read_other(path))
        except SourceError:
            return None
    return read


def _backend_files(ctx: ScanContext, present: set[str]) -> tuple[str, ...]:
    if PYPROJECT not in present or ctx.read_other is None:
        return ()
    try:
        backend = rm.build_backend(ctx.read_other(PYPROJECT))
    except SourceError:
        return ()
    return backend.files() if backend else ()


def _helper_summary(read: Callable[[str], bytes], repo: str | None, path: str, native: frozenset[str]) -> Summary:
    """What each function of a helper module does; a helper that cannot be read or parsed says
    nothing here (its own scan reports that)."""
    try:
        return summarize(read(path), repo, native)
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}


def _report_observations(sink: FindingSink, observations: list[Observation], lines: list[str]) -> None:
    seen: set[tuple[str, int]] = set()
    per_kind: dict[str, int] = {}
    for obs in observations:
        if (obs.kind, obs.line) in seen:
            continue
        seen.add((obs.kind, obs.line))
        per_kind[obs.kind] = per_kind.get(obs.kind, 0) + 1
        if per_kind[obs.kind] > MAX_PER_KIND:
            continue
        at_load, later = SEVERITIES[obs.kind]
        severity = at_load if obs.load_time else later
        when = "when called or run as a script"
        if obs.load_time:
            when = f"at import/load time ({obs.why})" if obs.why else "at import/load time"
        sink.add(_rule(severity), severity, f"{LABELS[obs.kind]} {when}: {obs.detail}",
                 evidence=_evidence(sink.path, lines, obs.line))
    for kind, count in per_kind.items():
        if count > MAX_PER_KIND:
            severity = max(SEVERITIES[kind][0 if o.load_time else 1] for o in observations if o.kind == kind)
            sink.add(_rule(severity), severity, f"{count - MAX_PER_KIND} more: {LABELS[kind]} (not listed)")


def _bandit_severity(issues: list[bandit_check.BanditIssue]) -> Severity:
    return Severity.MEDIUM if any(i.severity == "HIGH" for i in issues) else Severity.LOW


def _rule(severity: Severity) -> str:
    return "remote-code-suspicious" if severity is Severity.MEDIUM else "remote-code-dangerous"


def _report_correlations(sink: FindingSink, observations: list[Observation], lines: list[str]) -> None:
    unlinked: tuple[Observation, Observation] | None = None
    for capability, indicator, why in CORRELATIONS:
        first = next((o for o in observations if o.kind in capability), None)
        # A constant program or literal code cannot be what was fetched: that needs a data flow.
        linkable = indicator is not RUNS_CODE or capability is not FETCHES
        second = next((o for o in observations if o.kind in indicator and (linkable or not o.fixed)), None)
        if first and second:
            message = f"{why}: {LABELS[first.kind]} + {LABELS[second.kind]} in the same file"
            both = f"{_evidence(sink.path, lines, first.line)} | {_evidence(sink.path, lines, second.line)}"
            sink.add("remote-code-dangerous", Severity.CRITICAL, message, evidence=both)
            return  # one correlation finding per file is enough to block
        fixed = next((o for o in observations if o.kind in indicator and o.fixed), None)
        if first and fixed and not linkable:
            unlinked = (first, fixed)
    if unlinked:
        first, fixed = unlinked
        sink.add("remote-code-unlinked", Severity.HIGH,
                 f"{LABELS[first.kind]} and {LABELS[fixed.kind]} of a fixed program or library ({fixed.detail}) "
                 "with no data flow from one to the other: review what the download is used for",
                 evidence=f"{_evidence(sink.path, lines, first.line)} | {_evidence(sink.path, lines, fixed.line)}")


def _evidence(path: str, lines: list[str], line: int) -> str:
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return evidence(path, str(line), text)
