"""ONNX models: the files a runtime would open and the operators it would need native code for.

``onnxruntime.InferenceSession(path)`` (and ``onnx.load`` with external data) parses the
``ModelProto``, opens every tensor's external data file relative to the model's folder, and
resolves every node's ``(domain, op_type)`` to a kernel: built-in domains, the model's local
functions, or a custom-op library the application registered
(``SessionOptions.register_custom_ops_library``: a shared object that runs in-process). The model
is walked with range reads (``formats.onnx_model``); tensor bytes are never read.
"""

from __future__ import annotations

import posixpath
import re
from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.blobs import BudgetBlob
from app.core.formats.detect import Format
from app.core.formats.external_paths import escape_reason, resolve
from app.core.formats.onnx_model import ExternalData, OnnxModel, walk_model
from app.core.formats.protobuf_wire import WireError
from app.core.formats.ranged_wire import Walk
from app.core.formats.window import ByteWindow
from app.core.limits import LimitExceeded
from app.core.manifest import ManifestFile
from app.core.ports import SourceError
from app.core.scanners.base import ScanContext

NAME = "onnx"
ESCAPE = "onnx-external-data-escape"
MISSING = "onnx-external-data-missing"
RANGE = "onnx-external-data-range"
CUSTOM = "onnx-custom-domain"
PYTHON_OP = "onnx-python-op"
MALFORMED = "malformed-onnx"

# Domains onnxruntime registers kernels for (include/onnxruntime/core/graph/constants.h, and
# onnx's own training domains); anything else needs a custom-op library.
BUILTIN_DOMAINS = frozenset({
    "", "ai.onnx.ml", "ai.onnx.training", "ai.onnx.preview.training",
    "com.microsoft", "com.microsoft.experimental", "com.microsoft.nchwc", "com.ms.internal.nhwc",
    "com.microsoft.dml", "org.pytorch.aten",
})
# onnxruntime-training's PythonOp calls a Python autograd.Function looked up by name at run time.
PYTHON_OPS = frozenset({("com.microsoft", "PythonOp"), ("com.microsoft", "PythonOpGrad")})
_NATIVE_NAME = re.compile(r"\.(so(\.\d+)*|dll|dylib|pyd)$", re.IGNORECASE)
_NATIVE_FORMATS = frozenset({Format.ELF, Format.PE, Format.MACHO})
_SHOWN = 5  # tensors named in one message


class OnnxScanner:
    name: ClassVar[str] = NAME
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(ESCAPE, Severity.CRITICAL, "an ONNX tensor's external data location leaves the model's folder "
                 "('..', absolute, drive letter, UNC, URL) or is onnxruntime's in-memory address marker: "
                 "the runtime reads a file (or memory) the repo never shipped", kind=RuleKind.EXECUTION),
        RuleInfo(MISSING, Severity.MEDIUM, "an ONNX tensor's external data names a file that is not in the repo",
                 kind=RuleKind.EXECUTION),
        RuleInfo(RANGE, Severity.MEDIUM, "an ONNX tensor's external data offset/length runs past its file, "
                 "or is not a number", kind=RuleKind.EXECUTION),
        RuleInfo(CUSTOM, Severity.HIGH, "ONNX nodes in a domain no onnxruntime build provides: they need a "
                 "custom-op library (native code); medium, high when the repo ships a shared library",
                 kind=RuleKind.EXECUTION),
        RuleInfo(PYTHON_OP, Severity.HIGH, "an ONNX node onnxruntime-training runs by calling a Python "
                 "function by name (com.microsoft PythonOp)", kind=RuleKind.EXECUTION),
        RuleInfo(MALFORMED, Severity.LOW, "a .onnx file that does not parse as a ModelProto with a graph: "
                 "protobuf's parser (which hfvet's walk follows) refuses it too, so no runtime loads it",
                 kind=RuleKind.MALFORMED),
        RuleInfo.limit("the model's structure is larger than the read or field budget"),
        RuleInfo.scan_error("the model could not be read"),
    )

    def handles(self, file: ManifestFile) -> bool:
        return file.format == Format.ONNX or file.path.lower().endswith(".onnx")

    def version(self) -> str:
        return "1.0 (wire-format walk, no onnx)"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        model = OnnxModel()
        blob = BudgetBlob(ctx.blob, ctx.limits.max_read_bytes_per_file)
        try:
            walk_model(Walk(ByteWindow(blob)), model)
            if model.graphs == 0 and not model.functions:
                raise WireError("no graph: no runtime would accept it")
        except WireError as exc:
            sink.add(MALFORMED, Severity.LOW, f"not an ONNX model a runtime would load: {exc}")
        except LimitExceeded as exc:
            sink.add("limit-exceeded", Severity.HIGH, f"{exc}; the rest of the model was not read")
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc), sink.findings)
        _judge_external(ctx, model, sink)  # what was walked before an error still counts
        _judge_ops(ctx, model, sink)
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)


def _judge_external(ctx: ScanContext, model: OnnxModel, sink: FindingSink) -> None:
    sizes = {f.path: f.size for f in ctx.all_files}
    by_problem: dict[tuple[str, str, str], list[ExternalData]] = {}
    for tensor in model.external:
        for rule, detail, location in _problems(ctx.file.path, tensor, sizes):
            by_problem.setdefault((rule, detail, location), []).append(tensor)
    for (rule, detail, location), tensors in sorted(by_problem.items()):
        severity = Severity.CRITICAL if rule == ESCAPE else Severity.MEDIUM
        named = ", ".join(t.where for t in tensors[:_SHOWN]) + (" ..." if len(tensors) > _SHOWN else "")
        sink.add(rule, severity, f"external data location {location!r}: {detail} ({len(tensors)} tensor(s): "
                 f"{named})", evidence=location)


def _problems(model_path: str, tensor: ExternalData, sizes: dict[str, int]) -> list[tuple[str, str, str]]:
    locations = tensor.values("location")
    if tensor.external and not locations:
        return [(MISSING, "the tensor is EXTERNAL but names no location", "")]
    out = []
    for location in locations:
        reason = escape_reason(location)
        if reason is not None:
            out.append((ESCAPE, f"{reason}; the runtime opens it relative to the model's folder", location))
            continue
        target = resolve(model_path, location)
        if target not in sizes:
            out.append((MISSING, f"no file {target!r} in the repo", location))
            continue
        span = _span_problem(tensor, sizes[target])
        if span:
            out.append((RANGE, span, location))
    return out


def _span_problem(tensor: ExternalData, size: int) -> str | None:
    try:
        offsets = [int(v) for v in tensor.values("offset")] or [0]
        lengths = [int(v) for v in tensor.values("length")]
    except ValueError:
        return "offset or length is not a number"
    for offset in offsets:
        for length in lengths or [max(0, size - offset)]:
            if offset < 0 or length < 0 or offset + length > size:
                return f"offset {offset} + length {length} is past the file's {size} bytes"
    return None


def _judge_ops(ctx: ScanContext, model: OnnxModel, sink: FindingSink) -> None:
    custom: dict[str, list[str]] = {}
    for key in sorted(model.ops):
        domain, op = key
        where, count = model.ops[key][0], model.op_counts[key]
        if key in PYTHON_OPS:
            sink.add(PYTHON_OP, Severity.HIGH, f"op {domain}::{op} in {count} node(s), first at {where}: "
                     "onnxruntime-training calls a Python function by name", evidence=f"{domain}::{op}")
        elif domain not in BUILTIN_DOMAINS and key not in model.functions:
            custom.setdefault(domain, []).append(f"{op} ({count}, first at {where})")
    native = sorted(f.path for f in ctx.all_files if _NATIVE_NAME.search(f.path) or f.format in _NATIVE_FORMATS)
    for domain, ops in custom.items():
        _custom(sink, domain, ops, native)


def _custom(sink: FindingSink, domain: str, ops: list[str], native: list[str]) -> None:
    listed = "; ".join(ops[:_SHOWN]) + (f"; and {len(ops) - _SHOWN} more" if len(ops) > _SHOWN else "")
    needs = (f"custom domain {domain!r}: {listed}. These ops need a custom-op library "
             "(native code registered with register_custom_ops_library)")
    if native:
        shipped = ", ".join(posixpath.basename(p) for p in native[:_SHOWN])
        sink.add(CUSTOM, Severity.HIGH, f"{needs}, and the repo ships shared libraries ({shipped})", evidence=domain)
    else:
        sink.add(CUSTOM, Severity.MEDIUM, needs, evidence=domain)
