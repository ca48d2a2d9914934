"""TF SavedModel graphs: ops that run Python or touch files and the network, without TensorFlow.

``tf.saved_model.load`` reads ``saved_model.pb`` by name, whatever its bytes sniff as, and
runs the graph's ops: ``PyFunc`` calls back into Python, ``WriteFile`` and the checkpoint
ops take path tensors, debug ops send tensors to URLs. The file is parsed with hfvet's
bounded wire reader (``app.core.formats.protobuf_wire``); a file that does not parse, or
has no meta graph, is a high finding, never clean. Ops outside the known inference set are
reported for review. ``saved_model.pbtxt`` (text format) is not read here.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, ScanOutcome, Severity
from app.core.formats.blobs import BudgetBlob
from app.core.formats.protobuf_wire import Message, WireError
from app.core.limits import LimitExceeded
from app.core.manifest import ManifestFile
from app.core.ports import SourceError
from app.core.scanners.base import ScanContext
from app.core.scanners.savedmodel_graph import GraphOps, OpUse, walk_saved_model
from app.core.scanners.savedmodel_ops import IO_OPS, KNOWN_OPS, PYTHON_OPS

NAME = "savedmodel"
SAVED_MODEL_NAME = "saved_model.pb"
PYTHON_OP = "savedmodel-python-op"
IO_OP = "savedmodel-io-op"
UNKNOWN_OP = "savedmodel-unknown-op"
MALFORMED = "malformed-savedmodel"


class SavedModelScanner:
    name: ClassVar[str] = NAME
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(PYTHON_OP, Severity.CRITICAL, "a TF SavedModel graph has an op that runs Python "
                 "(PyFunc, EagerPyFunc...)"),
        RuleInfo(IO_OP, Severity.HIGH, "a TF SavedModel graph has an op that reads, writes or lists files "
                 "or talks to another host (WriteFile, SaveV2, RestoreV2, DebugIdentity...)"),
        RuleInfo(UNKNOWN_OP, Severity.MEDIUM, "a TF SavedModel graph uses an op outside hfvet's known "
                 "inference ops (a custom op needs its own kernel library)"),
        RuleInfo(MALFORMED, Severity.HIGH, "saved_model.pb is not a protobuf SavedModel hfvet can walk "
                 "(truncated, garbage, nested too deep, no meta graph)"),
        RuleInfo("limit-exceeded", Severity.HIGH, "saved_model.pb is larger than the per-file read budget"),
        RuleInfo("scan-error", Severity.HIGH, "saved_model.pb could not be read"),
    )

    def handles(self, file: ManifestFile) -> bool:
        return posixpath.basename(file.path) == SAVED_MODEL_NAME  # TF loads it by name

    def version(self) -> str:
        return "1.0 (wire-format walk, no tensorflow)"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        graph = GraphOps()
        try:
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


def _read_whole(ctx: ScanContext) -> bytes:
    size, cap = ctx.file.size, ctx.limits.max_read_bytes_per_file
    if size > cap:
        raise LimitExceeded(f"saved_model.pb is {size} bytes, over the {cap}-byte read budget")
    with ctx.budget().reserve(size):
        return BudgetBlob(ctx.blob, cap).read(0, size)


def report_ops(graph: GraphOps, sink: FindingSink) -> None:
    """One finding per distinct op name of concern, with its count and first node."""
    first: dict[str, OpUse] = {}
    counts: Counter[str] = Counter()
    for use in graph.ops:
        first.setdefault(use.name, use)
        counts[use.name] += 1
    for name, use in first.items():
        rule = _classify(name, graph.functions)
        if rule is None:
            continue
        severity = {PYTHON_OP: Severity.CRITICAL, IO_OP: Severity.HIGH}.get(rule, Severity.MEDIUM)
        sink.add(rule, severity, f"op {name!r} in {counts[name]} node(s), first at {use.where}",
                 evidence=name)


def _classify(op: str, functions: set[str]) -> str | None:
    # Dangerous names first: a library function named PyFunc must not hide the op.
    if op in PYTHON_OPS:
        return PYTHON_OP
    if op in IO_OPS:
        return IO_OP
    if op in functions or op in KNOWN_OPS:
        return None
    return UNKNOWN_OP
