"""Paddle inference programs (``.pdmodel``): ops that call back into Python or touch files and hosts.

``paddle.static.load_inference_model`` / ``paddle.inference.Config(model, params)`` parse the
``ProgramDesc`` and run its ops; the ``.pdiparams`` beside it is raw tensor data that the
loader reads with its own ``load_combine``, never a pickle (``.pdparams``, from ``paddle.save``,
is a pickle and is walked as one). From paddle/fluid/framework/framework.proto:
  ProgramDesc: blocks 1;  BlockDesc: ops 4;  OpDesc: type 3
Every block is at the top level, so walking them all reaches every op (control flow included).
``py_func`` calls a Python callable registered in the process; ``save``/``load`` ops take file
paths from their attributes, the ``send``/``recv``/``listen_and_serv`` family talks to other hosts.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.blobs import BudgetBlob
from app.core.formats.protobuf_wire import LEN, WireError
from app.core.formats.ranged_wire import Walk
from app.core.formats.window import ByteWindow
from app.core.limits import LimitExceeded
from app.core.manifest import ManifestFile
from app.core.ports import SourceError
from app.core.scanners.base import ScanContext

NAME = "paddle"
PYTHON_OP = "paddle-python-op"
IO_OP = "paddle-io-op"
MALFORMED = "malformed-paddle"
PROGRAM_BLOCKS, BLOCK_OPS, OP_TYPE = 1, 4, 3
PYTHON_OPS = frozenset({"py_func", "py_layer"})
IO_OPS = frozenset({
    "save", "save_combine", "load", "load_combine", "read_file", "checkpoint_notify", "send", "recv",
    "send_barrier", "fetch_barrier", "listen_and_serv", "send_and_recv", "distributed_lookup_table",
    "distributed_push_sparse", "heter_listen_and_serv", "print",
})


class PaddleScanner:
    name: ClassVar[str] = NAME
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(PYTHON_OP, Severity.CRITICAL, "a Paddle program op that calls back into Python (py_func)",
                 kind=RuleKind.EXECUTION),
        RuleInfo(IO_OP, Severity.HIGH, "a Paddle program op that reads or writes files or talks to another host "
                 "(save/load, send/recv, listen_and_serv...)", kind=RuleKind.EXECUTION),
        RuleInfo(MALFORMED, Severity.LOW, "a .pdmodel that does not parse as a ProgramDesc: nothing loads it",
                 kind=RuleKind.MALFORMED),
        RuleInfo.limit("the program is larger than the read or field budget"),
        RuleInfo.scan_error("the program could not be read"),
    )

    def handles(self, file: ManifestFile) -> bool:
        # Paddle opens it by name (``__model__`` before Paddle 2.0); protobuf has no magic
        return file.path.lower().endswith(".pdmodel") or posixpath.basename(file.path) == "__model__"

    def version(self) -> str:
        return "1.0 (wire-format walk, no paddle)"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        ops: Counter[str] = Counter()
        try:
            _walk(Walk(ByteWindow(BudgetBlob(ctx.blob, ctx.limits.max_read_bytes_per_file))), ops)
        except WireError as exc:
            sink.add(MALFORMED, Severity.LOW, f"not a Paddle program Paddle would load: {exc}")
        except LimitExceeded as exc:
            sink.add("limit-exceeded", Severity.HIGH, f"{exc}; the rest of the program was not read")
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc), sink.findings)
        for op in sorted(ops):
            if op in PYTHON_OPS:
                sink.add(PYTHON_OP, Severity.CRITICAL, f"op {op!r} in {ops[op]} node(s): calls back into Python",
                         evidence=op)
            elif op in IO_OPS:
                sink.add(IO_OP, Severity.HIGH, f"op {op!r} in {ops[op]} node(s): reads or writes files or talks "
                         "to another host", evidence=op)
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)


def _walk(walk: Walk, ops: Counter[str]) -> None:
    top = walk.top()
    for block in top.fields():
        if block.number != PROGRAM_BLOCKS or block.wire_type != LEN:
            continue
        block_message = top.nested(block)
        for op in block_message.fields():
            if op.number != BLOCK_OPS or op.wire_type != LEN:
                continue
            op_message = block_message.nested(op)
            for item in op_message.fields():
                if item.number == OP_TYPE and item.wire_type == LEN:
                    ops[item.text(walk)] += 1
