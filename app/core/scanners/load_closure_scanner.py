"""The load closure (``app.core.loaders``): what each runtime would import, run, install and fetch.

For every file a loader-map surface reads, the items it names become findings: each one a
``load-closure`` info finding (the report's ``closure``), another repo a ``repo-reference`` (so the
gate judges it like any reference, with ``code`` set when loading it runs its code), start-up hooks
and dangerous import targets findings of their own. The code files in the closure are analysed as
load-time code by the remote-code scanner.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from app.core.closure import CLOSURE_RULE, ClosureItem, Gate, Kind
from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.detect import COMPRESSED_STREAMS, Format
from app.core.limits import LimitExceeded
from app.core.loaders.archive import UnreadArchive, compressed_member_texts, member_texts
from app.core.loaders.closure import surfaces_for
from app.core.loaders.loader_map import items_for_file, loader_map, map_version
from app.core.loaders.readers import read_surface
from app.core.loaders.schema import Read, Surface
from app.core.loaders.view import FileView
from app.core.manifest import ManifestFile
from app.core.ports import SourceError
from app.core.repo_refs import REFERENCE_RULE, RepoReference
from app.core.scanners.base import ScanContext
from app.core.scanners.pickle_engine.catalog import Verdict, classify
from app.core.scanners.text_rules.text_lines import decode_text, read_whole

RUNTIME_CODE = "runtime-code"
RUNTIME_CODE_MISSING = "runtime-code-missing"
STARTUP_HOOK = "startup-hook"
IMPORT_TARGET_DANGEROUS = "import-target-dangerous"
IMPORT_TARGET_UNLISTED = "import-target-unlisted"
RUNTIME_INSTALL = "runtime-install"
ARCHIVE_CONFIG_UNREAD = "archive-config-unread"


class LoadClosureScanner:
    name: ClassVar[str] = "load-closure"
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(CLOSURE_RULE, Severity.INFO,
                 "one thing a runtime does with the repo (imports, runs, installs, fetches): the report's `closure`",
                 kind=RuleKind.NOTE),
        RuleInfo(REFERENCE_RULE, Severity.INFO,
                 "another Hub repo a runtime fetches (in the report's references; `code` when it runs its code)",
                 kind=RuleKind.REFERENCE),
        RuleInfo(RUNTIME_CODE, Severity.LOW,
                 "a runtime imports and runs this repo's Python while loading it (a handler, a custom component, "
                 "hubconf.py...): analysed as load-time code", kind=RuleKind.REMOTE_CODE),
        RuleInfo(RUNTIME_CODE_MISSING, Severity.MEDIUM,
                 "a config names a code module the repo lacks: the runtime would fail or find it elsewhere",
                 kind=RuleKind.REMOTE_CODE),
        RuleInfo(STARTUP_HOOK, Severity.HIGH,
                 "a Python start-up hook (sitecustomize.py, usercustomize.py, a .pth import line): every interpreter "
                 "that has the folder on its path runs it", kind=RuleKind.DANGEROUS_CODE),
        RuleInfo(IMPORT_TARGET_DANGEROUS, Severity.CRITICAL,
                 "a config makes a runtime import and call a process, exec, native-code, network or load primitive "
                 "(Hydra `_target_: os.system`)", kind=RuleKind.EXECUTION),
        RuleInfo(IMPORT_TARGET_UNLISTED, Severity.MEDIUM,
                 "a config makes a runtime import and call something outside the libraries it names (review)",
                 kind=RuleKind.REMOTE_CODE),
        RuleInfo(RUNTIME_INSTALL, Severity.LOW,
                 "a runtime installs packages from the repo before loading it (Inference Endpoints' requirements.txt)",
                 kind=RuleKind.INSTALL),
        RuleInfo(ARCHIVE_CONFIG_UNREAD, Severity.MEDIUM,
                 "a compressed archive a runtime extracts configs from (a gzip `.nemo`) broke or hit a limit before "
                 "its configs: they were not read for the closure (review)", kind=RuleKind.PARTIAL),
        RuleInfo.limit("file (or config inside an archive) larger than the text limit: not read for the closure"),
    )

    def handles(self, file: ManifestFile) -> bool:
        # A surface that reads content reads text (or a tar's text members); `model.pth` weights are not
        # a site .pth file.
        return any(_reads(s, file.format) for s in surfaces_for(loader_map().surfaces, file.path))

    def version(self) -> str:
        return f"1 (loader map {map_version()})"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        path = ctx.file.path
        sink = FindingSink(path, self.name)
        surfaces = surfaces_for(loader_map().surfaces, path)
        if ctx.file.format == Format.TAR:
            return self._scan_members(ctx, sink, [s for s in surfaces if s.members])
        if ctx.file.format in COMPRESSED_STREAMS:
            return self._scan_members(ctx, sink, [s for s in surfaces if s.members], compressed=True)
        surfaces = [s for s in surfaces if not s.members]
        text = ""
        if ctx.file.format == Format.TEXT and any(s.read is not Read.FILE for s in surfaces):
            try:
                text = decode_text(read_whole(ctx.blob, ctx.limits.max_text_bytes))
            except LimitExceeded as exc:
                sink.add("limit-exceeded", Severity.HIGH, str(exc))
            except SourceError as exc:
                return ScanOutcome.failed(self.name, path, str(exc))
        else:
            surfaces = [s for s in surfaces if s.read is Read.FILE]
        present = frozenset(f.path for f in ctx.all_files) or frozenset({path})
        for item in items_for_file(path, text, present, ctx.identity.repo_id, surfaces):
            _report(sink, item, present)
        return ScanOutcome.scanned(self.name, path, sink.findings)


    def _scan_members(self, ctx: ScanContext, sink: FindingSink, surfaces: list[Surface],
                      compressed: bool = False) -> ScanOutcome:
        """Configs a runtime extracts from the tar (NeMo's ``model_config.yaml``), read as their surface says."""
        present = frozenset(f.path for f in ctx.all_files) or frozenset({ctx.file.path})
        try:
            for surface in surfaces:
                texts = (compressed_member_texts(ctx.blob, ctx.file.format, surface.members, ctx.limits) if compressed
                         else member_texts(ctx.blob, surface.members, ctx.limits.max_text_bytes))
                for member, text in texts:
                    if text is None:
                        sink.add("limit-exceeded", Severity.HIGH,
                                 f"{member} is larger than the text limit: the config {surface.runtime} reads "
                                 "from it was not read", member=member)
                        continue
                    view = FileView(ctx.file.path, text, present, ctx.identity.repo_id)
                    for item in read_surface(surface, view):
                        _report(sink, replace(item, path=f"{ctx.file.path}!{member}"), present)
        except UnreadArchive as exc:
            sink.add(ARCHIVE_CONFIG_UNREAD, Severity.MEDIUM,
                     f"the compressed archive could not be read as far as its configs ({exc}): what the runtime "
                     "extracts from it was not read")
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc), sink.findings)
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)


def _reads(surface: Surface, fmt: str) -> bool:
    if surface.members:
        return fmt == Format.TAR or fmt in COMPRESSED_STREAMS
    return surface.read is Read.FILE or fmt == Format.TEXT


def _report(sink: FindingSink, item: ClosureItem, present: frozenset[str]) -> None:
    where = f"{item.surface} ({item.runtime})"
    sink.add(CLOSURE_RULE, Severity.INFO, f"{where}: {item.kind} {item.target}", evidence=item.evidence())
    if item.repo is not None:
        code = item.carries_trust or item.kind in (Kind.CODE, Kind.NATIVE)
        ref = RepoReference(item.repo, item.revision, item.path, item.surface, code)
        pinned = f" at {item.revision}" if item.revision else " (default branch, unpinned)"
        runs = ", running its code" if code else ""
        sink.add(REFERENCE_RULE, Severity.INFO, f"{where} loads {item.repo}{pinned}{runs}", evidence=ref.evidence())
    elif item.kind is Kind.HOOK:
        sink.add(STARTUP_HOOK, Severity.HIGH, f"{where}: {item.target} runs on interpreter start-up",
                 evidence=item.target)
    elif item.kind is Kind.INSTALL:
        sink.add(RUNTIME_INSTALL, Severity.LOW, f"{where}: installs what {item.target} lists", evidence=item.target)
    elif item.kind is Kind.CODE:
        _report_code(sink, item, present, where)


def _report_code(sink: FindingSink, item: ClosureItem, present: frozenset[str], where: str) -> None:
    gate = "on load" if item.gate is Gate.ALWAYS else f"when loaded ({item.gate})"
    if item.local and item.target in present:
        sink.add(RUNTIME_CODE, Severity.LOW, f"{where} imports and runs {item.target} {gate}", evidence=item.target)
    elif item.local:
        sink.add(RUNTIME_CODE_MISSING, Severity.MEDIUM, f"{where} names {item.target}, which the repo lacks",
                 evidence=item.target)
    else:
        _report_import(sink, item, where, gate)


def _report_import(sink: FindingSink, item: ClosureItem, where: str, gate: str) -> None:
    module, _, name = item.target.replace(":", ".").rpartition(".")
    verdict = classify(module, name) if module else None
    if verdict is not None and verdict.verdict is Verdict.DANGEROUS:
        sink.add(IMPORT_TARGET_DANGEROUS, Severity.CRITICAL,
                 f"{where} imports and calls {item.target} {gate}: {verdict.reason}", evidence=item.target)
    else:
        sink.add(IMPORT_TARGET_UNLISTED, Severity.MEDIUM,
                 f"{where} imports and calls {item.target} {gate}, outside the libraries it names",
                 evidence=item.target)
