"""Core ML models (.mlmodel, and the model.mlmodel inside an .mlpackage): custom layers, custom
models and linked models, read with the ranged protobuf walk (``formats.coreml_model``)."""

from __future__ import annotations

from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.blobs import BudgetBlob
from app.core.formats.coreml_model import CoremlModel, walk_coreml
from app.core.formats.detect import Format
from app.core.formats.external_paths import escape_reason
from app.core.formats.protobuf_wire import WireError
from app.core.formats.ranged_wire import Walk
from app.core.formats.window import ByteWindow
from app.core.limits import LimitExceeded
from app.core.manifest import ManifestFile
from app.core.ports import SourceError
from app.core.scanners.base import ScanContext

NAME = "coreml"
CUSTOM = "coreml-custom-code"
LINKED = "coreml-linked-model-escape"
MALFORMED = "malformed-coreml"
_SHOWN = 5


class CoremlScanner:
    name: ClassVar[str] = NAME
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(CUSTOM, Severity.MEDIUM, "a Core ML custom layer or custom model: it runs an Objective-C/Swift "
                 "class the application compiles in (native code outside the model)", kind=RuleKind.EXECUTION),
        RuleInfo(LINKED, Severity.HIGH, "a Core ML linked model whose file name or search path leaves the "
                 "model's folder (absolute, '..'): Core ML loads a compiled model the repo never shipped",
                 kind=RuleKind.EXECUTION),
        RuleInfo(MALFORMED, Severity.LOW, "a .mlmodel file that does not parse as a Core ML Model: nothing loads it",
                 kind=RuleKind.MALFORMED),
        RuleInfo.limit("the model's structure is larger than the read or field budget"),
        RuleInfo.scan_error("the model could not be read"),
    )

    def handles(self, file: ManifestFile) -> bool:
        return file.format == Format.COREML or file.path.lower().endswith(".mlmodel")

    def version(self) -> str:
        return "1.0 (wire-format walk, no coremltools)"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        model = CoremlModel()
        try:
            walk_coreml(Walk(ByteWindow(BudgetBlob(ctx.blob, ctx.limits.max_read_bytes_per_file))), model)
        except WireError as exc:
            sink.add(MALFORMED, Severity.LOW, f"not a Core ML model Core ML would load: {exc}")
        except LimitExceeded as exc:
            sink.add("limit-exceeded", Severity.HIGH, f"{exc}; the rest of the model was not read")
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc), sink.findings)
        _judge(model, sink)
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)


def _judge(model: CoremlModel, sink: FindingSink) -> None:
    custom = [f"custom layer class {name!r} at {where}" for name, where in model.custom_layers]
    custom += [f"custom model class {name!r} at {where}" for name, where in model.custom_models]
    if custom:
        listed = "; ".join(custom[:_SHOWN]) + (f"; and {len(custom) - _SHOWN} more" if len(custom) > _SHOWN else "")
        sink.add(CUSTOM, Severity.MEDIUM, f"{listed}: the application must compile these classes in",
                 evidence=(model.custom_layers or model.custom_models)[0][0])
    for file_name, search_path, where in model.linked:
        for path in [file_name, *search_path.split(":")]:
            reason = escape_reason(path) if path and not path.startswith("$") else None
            if reason:
                sink.add(LINKED, Severity.HIGH, f"linked model {file_name!r} at {where}: search path {path!r} is "
                         f"{reason}", evidence=path)
