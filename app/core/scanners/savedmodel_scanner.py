"""TF SavedModel graphs: ops that run Python or touch files and the network, without TensorFlow.

``tf.saved_model.load`` reads ``saved_model.pb`` by name, whatever its bytes sniff as, and
runs the graph's ops: ``PyFunc`` calls back into Python, ``WriteFile`` and the checkpoint
ops take path tensors, debug ops send tensors to URLs. The file is parsed with hfvet's
bounded wire reader (``app.core.formats.protobuf_wire``); a file that does not parse, or
has no meta graph, is a high finding, never clean. Ops outside the known inference set are
reported for review. Every SavedModel's saver has SaveV2/RestoreV2/MergeV2Checkpoints; those
whose path input traces back to a placeholder or function argument (the file the loader
names) are medium, those with a path the graph builds from constants stay high.
``saved_model.pbtxt`` (text format, which TF loads when there is no ``saved_model.pb``) is
matched by op name only (``savedmodel_text``) and always left for review.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.blobs import BudgetBlob
from app.core.formats.protobuf_wire import Message, WireError
from app.core.limits import LimitExceeded
from app.core.manifest import ManifestFile
from app.core.ports import SourceError
from app.core.scanners.base import ScanContext
from app.core.scanners.savedmodel_graph import GraphOps, OpUse, walk_saved_model
from app.core.scanners.savedmodel_ops import IO_OPS, KNOWN_OPS, PYTHON_OPS
from app.core.scanners.savedmodel_text import string_values

NAME = "savedmodel"
SAVED_MODEL_NAME = "saved_model.pb"
TEXT_NAME = "saved_model.pbtxt"
PYTHON_OP = "savedmodel-python-op"
IO_OP = "savedmodel-io-op"
UNKNOWN_OP = "savedmodel-unknown-op"
MALFORMED = "malformed-savedmodel"
TEXT_FORMAT = "savedmodel-text-format"
CHECKPOINT = "savedmodel-checkpoint-op"


class SavedModelScanner:
    name: ClassVar[str] = NAME
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(PYTHON_OP, Severity.CRITICAL, "a TF SavedModel graph has an op that runs Python "
                 "(PyFunc, EagerPyFunc...)", kind=RuleKind.EXECUTION),
        RuleInfo(IO_OP, Severity.HIGH, "a TF SavedModel graph has an op that reads, writes or lists files "
                 "or talks to another host (WriteFile, SaveV2, RestoreV2, DebugIdentity...)", kind=RuleKind.EXECUTION),
        RuleInfo(CHECKPOINT, Severity.MEDIUM, "a TF SavedModel checkpoint op (SaveV2, RestoreV2...) whose "
                 "path comes from a placeholder or function argument, as the saver's does; one with a "
                 "hardcoded path is savedmodel-io-op", kind=RuleKind.EXECUTION),
        RuleInfo(UNKNOWN_OP, Severity.MEDIUM, "a TF SavedModel graph uses an op outside hfvet's known "
                 "inference ops (a custom op needs its own kernel library)", kind=RuleKind.EXECUTION),
        RuleInfo(MALFORMED, Severity.HIGH, "saved_model.pb is not a protobuf SavedModel hfvet can walk "
                 "(truncated, garbage, nested too deep, no meta graph)", kind=RuleKind.MALFORMED),
        RuleInfo(TEXT_FORMAT, Severity.MEDIUM, "a text-format saved_model.pbtxt: hfvet matches op names "
                 "in its strings but does not walk the graph, so it is left for review", kind=RuleKind.PARTIAL),
        RuleInfo.limit("the SavedModel file is larger than the per-file read budget"),
        RuleInfo.scan_error("the SavedModel file could not be read"),
    )

    def handles(self, file: ManifestFile) -> bool:
        return posixpath.basename(file.path) in (SAVED_MODEL_NAME, TEXT_NAME)  # TF loads them by name

    def version(self) -> str:
        return "1.0 (wire-format walk, no tensorflow)"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        graph = GraphOps()
        try:
            if posixpath.basename(ctx.file.path) == TEXT_NAME:
                return _scan_text(_read_whole(ctx, ctx.limits.max_text_bytes), sink)
            walk_saved_model(Message.top(_read_whole(ctx)), graph)
            if graph.meta_graphs == 0:
                raise WireError("no meta graph: no TensorFlow loader would accept it")
        except WireError as exc:
            sink.add(MALFORMED, Severity.HIGH, f"saved_model.pb is not a SavedModel hfvet can walk: {exc}")
        except LimitExceeded as exc:
            sink.add("limit-exceeded", Severity.HIGH, str(exc))
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc))
        report_ops(graph, sink)  # what was walked before an error still counts
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)


def _scan_text(data: bytes, sink: FindingSink) -> ScanOutcome:
    sink.add(TEXT_FORMAT, Severity.MEDIUM, "text-format SavedModel: op names matched in its strings, "
             "the graph is not walked")
    graph = GraphOps(ops=[OpUse(value, "a string literal") for value in
                          set(string_values(data.decode("utf-8", "replace")))
                          if value in PYTHON_OPS or value in IO_OPS])
    report_ops(graph, sink)
    return ScanOutcome.scanned(NAME, sink.path, sink.findings)


def _read_whole(ctx: ScanContext, cap: int | None = None) -> bytes:
    # Text is capped at the text limit: matching strings costs ~1 s per MB in the worst case.
    size, cap = ctx.file.size, cap or ctx.limits.max_read_bytes_per_file
    if size > cap:
        raise LimitExceeded(f"{posixpath.basename(ctx.file.path)} is {size} bytes, over the {cap}-byte limit")
    with ctx.budget().reserve(size):
        return BudgetBlob(ctx.blob, cap).read(0, size)


def report_ops(graph: GraphOps, sink: FindingSink) -> None:
    """One finding per distinct op name of concern, with its count and first node."""
    first: dict[tuple[str, str], OpUse] = {}
    counts: Counter[tuple[str, str]] = Counter()
    for use in graph.ops:
        rule = _classify(use, graph.functions)
        if rule is not None:
            first.setdefault((rule, use.name), use)
            counts[rule, use.name] += 1
    for (rule, name), use in first.items():
        severity = {PYTHON_OP: Severity.CRITICAL, IO_OP: Severity.HIGH}.get(rule, Severity.MEDIUM)
        how = ", path from a placeholder or argument" if rule == CHECKPOINT else ""
        sink.add(rule, severity, f"op {name!r} in {counts[rule, name]} node(s){how}, first at {use.where}",
                 evidence=name)


def _classify(use: OpUse, functions: set[str]) -> str | None:
    # Dangerous names first: a library function named PyFunc must not hide the op.
    op = use.name
    if op in PYTHON_OPS:
        return PYTHON_OP
    if use.fed:
        return CHECKPOINT
    if op in IO_OPS:
        return IO_OP
    if op in functions or op in KNOWN_OPS:
        return None
    return UNKNOWN_OP
