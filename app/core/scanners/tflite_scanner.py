"""TFLite models: the custom and Flex ops the interpreter would need code for.

A builtin op runs one of the interpreter's own kernels. A custom op runs whatever kernel the
application registered under its name (native code outside the model), except the few the stock
``BuiltinOpResolver`` registers itself (tensorflow/lite/core/kernels/register.cc). A custom op
named ``Flex<Op>`` runs TensorFlow's kernel for ``<Op>`` through the Flex delegate
(tensorflow/lite/delegates/flex), which the TF pip package links in: TF ops that run Python or
touch files and hosts are as dangerous here as in a SavedModel graph (``savedmodel_ops``).
"""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.blobs import BudgetBlob
from app.core.formats.detect import Format
from app.core.formats.flatbuffer import FlatError
from app.core.formats.tflite_model import BUILTIN_CUSTOM, read_model
from app.core.limits import LimitExceeded
from app.core.manifest import ManifestFile
from app.core.ports import SourceError
from app.core.scanners.base import ScanContext
from app.core.scanners.savedmodel_ops import IO_OPS, PYTHON_OPS

NAME = "tflite"
FLEX_DANGEROUS = "tflite-flex-dangerous-op"
FLEX = "tflite-flex-op"
CUSTOM = "tflite-custom-op"
MALFORMED = "malformed-tflite"
FLEX_PREFIX = "Flex"
# Custom ops the stock BuiltinOpResolver registers (tensorflow/lite/core/kernels/register.cc), and
# those MediaPipe's op resolvers register for its own models (mediapipe/util/tflite/cpu_op_resolver.cc,
# op_resolver.cc, operations/): kernels of the runtime, no application code.
STOCK_CUSTOM_OPS = frozenset({
    "NumericVerify", "Mfcc", "AudioSpectrogram", "TFLite_Detection_PostProcess",
    "MaxPoolingWithArgmax2D", "MaxUnpooling2D", "Convolution2DTransposeBias", "TransformLandmarks",
    "TransformTensorBilinear", "Landmarks2TransformMatrix",
})
_SHOWN = 8


class TfliteScanner:
    name: ClassVar[str] = NAME
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(FLEX_DANGEROUS, Severity.CRITICAL, "a TFLite Flex op whose TensorFlow kernel runs Python or "
                 "reads, writes or lists files or talks to another host (FlexPyFunc, FlexWriteFile, FlexReadFile...)",
                 kind=RuleKind.EXECUTION),
        RuleInfo(FLEX, Severity.MEDIUM, "TFLite Flex ops: TensorFlow kernels run through the Flex delegate",
                 kind=RuleKind.EXECUTION),
        RuleInfo(CUSTOM, Severity.MEDIUM, "TFLite custom ops the stock interpreter does not have: the "
                 "application must register native kernels for them", kind=RuleKind.EXECUTION),
        RuleInfo(MALFORMED, Severity.HIGH, "a .tflite file the interpreter would refuse (bad flatbuffer offsets, "
                 "wrong schema version)", kind=RuleKind.MALFORMED),
        RuleInfo.limit("the model has more operator codes than hfvet reads"),
        RuleInfo.scan_error("the model could not be read"),
    )

    def handles(self, file: ManifestFile) -> bool:
        return file.format == Format.TFLITE or file.path.lower().endswith(".tflite")

    def version(self) -> str:
        return "1.0 (flatbuffer walk, no tensorflow)"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        try:
            model = read_model(BudgetBlob(ctx.blob, ctx.limits.max_read_bytes_per_file))
        except FlatError as exc:
            sink.add(MALFORMED, Severity.HIGH, f"not a TFLite model the interpreter would load: {exc}")
        except LimitExceeded as exc:
            sink.add("limit-exceeded", Severity.HIGH, f"{exc}; the operator codes were not all read")
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc))
        else:
            _judge(Counter(c.custom or "" for c in model.codes if c.builtin == BUILTIN_CUSTOM), sink)
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)


def _judge(custom: Counter[str], sink: FindingSink) -> None:
    flex = sorted(name for name in custom if name.startswith(FLEX_PREFIX))
    other = sorted(name for name in custom if not name.startswith(FLEX_PREFIX) and name not in STOCK_CUSTOM_OPS)
    for name in flex:
        op = name.removeprefix(FLEX_PREFIX)
        if op in PYTHON_OPS or op in IO_OPS:
            what = "calls back into Python" if op in PYTHON_OPS else "reads, writes or lists files, or talks to a host"
            sink.add(FLEX_DANGEROUS, Severity.CRITICAL, f"Flex op {name!r}: TensorFlow's {op} kernel {what}",
                     evidence=name)
    if flex:
        sink.add(FLEX, Severity.MEDIUM, f"{len(flex)} Flex op(s) run TensorFlow kernels through the Flex "
                 f"delegate: {_listed(flex)}", evidence=flex[0])
    if other:
        sink.add(CUSTOM, Severity.MEDIUM, f"{len(other)} custom op(s) need kernels the application registers "
                 f"(native code outside the model): {_listed(other)}", evidence=other[0])


def _listed(names: list[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
