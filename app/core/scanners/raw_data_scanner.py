"""Raw weight blobs the repo's layout reads as bytes (``formats.side_files``): named, never silent.

Such a blob's head looked like a pickle header, but no pickle loader reaches its name, a loader
of the layout reads it raw (ONNX external data, an OpenVINO IR's ``.bin``...), and as a pickle
it would break before running anything. It is reported at info level so the report says why a
pickle-looking file was not walked as a pickle.
"""

from __future__ import annotations

from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.detect import Format
from app.core.manifest import ManifestFile
from app.core.ports import SourceError
from app.core.scanners.base import ScanContext

RAW_SIDE_FILE = "raw-side-file"
EVIDENCE_BYTES = 16


class RawDataScanner:
    name: ClassVar[str] = "raw-data"
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(RAW_SIDE_FILE, Severity.INFO, "a weight blob whose first bytes look like a pickle header, "
                 "read as raw bytes by a loader of the repo's layout and by no pickle loader; as a pickle it "
                 "breaks before any import or call", kind=RuleKind.NOTE),
        RuleInfo.scan_error("the file could not be read"),
    )

    def handles(self, file: ManifestFile) -> bool:
        return file.format == Format.RAW_DATA

    def version(self) -> str:
        return "1.0"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        try:
            head = ctx.blob.read(0, EVIDENCE_BYTES)
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc))
        sink = FindingSink(ctx.file.path, self.name)
        sink.add(RAW_SIDE_FILE, Severity.INFO,
                 f"{ctx.file.size}-byte raw weight blob: its first bytes look like a pickle header, but the repo's "
                 "layout reads it as raw bytes (ONNX external data, OpenVINO .bin, TF checkpoint shard, Core ML "
                 "weights, TF.js or MLC shard), no pickle loader reaches its name, and as a pickle it would break "
                 "before any import or call", evidence=head.hex())
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)
