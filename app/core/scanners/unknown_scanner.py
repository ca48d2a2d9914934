"""Files whose content matches no known format and is not text: named, never ignored.

The pipeline already reports files it could not read; this scanner makes sure an
unrecognised binary counts as looked at while still leaving a trace for review.
"""

from __future__ import annotations

from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.detect import Format
from app.core.manifest import ManifestFile
from app.core.ports import SourceError
from app.core.scanners.base import ScanContext

EVIDENCE_BYTES = 16


class UnknownContentScanner:
    name: ClassVar[str] = "unknown-content"
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo("unrecognized-binary", Severity.LOW,
                 "binary content of no known format (first 16 bytes as evidence)", kind=RuleKind.NOTE),
        RuleInfo.scan_error("the file could not be read"),
    )

    def handles(self, file: ManifestFile) -> bool:
        return file.format == Format.UNKNOWN

    def version(self) -> str:
        return "1.0"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        try:
            head = ctx.blob.read(0, EVIDENCE_BYTES)
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc))
        sink = FindingSink(ctx.file.path, self.name)
        sink.add("unrecognized-binary", Severity.LOW,
                 f"{ctx.file.size}-byte file of no recognised format: nothing knows how to vet it",
                 evidence=head.hex())
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)
