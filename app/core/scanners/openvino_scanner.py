"""OpenVINO IR (.xml beside its .bin): layers whose op no OpenVINO build provides.

``Core.read_model("model.xml")`` builds each ``<layer type=... version=...>`` from the opset its
``version`` names (``opset1``..., and ``ie_internal_opset`` for the runtime's own internal ops);
any other version is an extension op that only an extension library the application loaded
(``core.add_extension(path)``: a shared object, in-process) can build. The weights ``.bin`` is
read raw (``formats.side_files``). The XML is matched with bounded regular expressions over its
text, never parsed by an XML library (no entity expansion), in chunks with an overlap longer
than any layer tag.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.blobs import BudgetBlob
from app.core.formats.detect import Format
from app.core.limits import LimitExceeded
from app.core.manifest import ManifestFile
from app.core.ports import SourceError
from app.core.scanners.base import ScanContext

NAME = "openvino"
EXTENSION = "openvino-extension-op"
CHUNK = 1024 * 1024
OVERLAP = 8192  # longer than any layer tag hfvet reads (attributes are capped below)
_IR_ROOT = re.compile(rb"<net\b")
_LAYER = re.compile(rb"<layer\b([^>]{0,4096})>")
_ATTR = re.compile(rb"\b(type|version)=\"([^\"]{0,256})\"")
_BUILTIN = re.compile(r"^(?:opset\d+|ie_internal_opset)$")
_NATIVE_NAME = re.compile(r"\.(so(\.\d+)*|dll|dylib)$", re.IGNORECASE)
_SHOWN = 8


class OpenvinoScanner:
    name: ClassVar[str] = NAME
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(EXTENSION, Severity.HIGH, "OpenVINO IR layers from an opset no OpenVINO build provides: an "
                 "extension library (native code) must be loaded to build them; medium, high when the repo "
                 "ships a shared library", kind=RuleKind.EXECUTION),
        RuleInfo.limit("the IR is larger than the per-file read budget"),
        RuleInfo.scan_error("the IR could not be read"),
    )

    def handles(self, file: ManifestFile) -> bool:
        return file.format == Format.TEXT and file.path.lower().endswith(".xml")

    def version(self) -> str:
        return "1.0 (layer tags, no XML parser)"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        blob = BudgetBlob(ctx.blob, ctx.limits.max_read_bytes_per_file)
        try:
            if not _IR_ROOT.search(blob.read(0, 4096)):
                return ScanOutcome.scanned(self.name, ctx.file.path, [])  # some other XML file
            ops = _extension_ops(blob)
        except LimitExceeded as exc:
            sink.add("limit-exceeded", Severity.HIGH, f"{exc}; the rest of the IR was not read")
            return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc))
        if ops:
            _report(ctx, ops, sink)
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)


def _extension_ops(blob: BudgetBlob) -> Counter[tuple[str, str]]:
    ops: Counter[tuple[str, str]] = Counter()
    for start in range(0, blob.size, CHUNK):  # read at call time: tests shrink CHUNK
        chunk = blob.read(start, CHUNK + OVERLAP)
        for match in _LAYER.finditer(chunk):
            if match.start() >= CHUNK:
                break  # starts in the overlap: the next chunk counts it
            attrs = {key.decode(): value.decode("utf-8", "replace") for key, value in _ATTR.findall(match.group(1))}
            version = attrs.get("version", "")
            if not _BUILTIN.match(version):
                ops[attrs.get("type", "?"), version] += 1
    return ops


def _report(ctx: ScanContext, ops: Counter[tuple[str, str]], sink: FindingSink) -> None:
    listed = ", ".join(f"{op} (version {version!r}, {count} layer(s))" for (op, version), count in sorted(ops.items()))
    native = sorted(posixpath.basename(f.path) for f in ctx.all_files if _NATIVE_NAME.search(f.path))
    evidence = sorted(ops)[0][0]
    if native:
        sink.add(EXTENSION, Severity.HIGH, f"extension ops {listed[:600]}: they need an extension library, and "
                 f"the repo ships shared libraries ({', '.join(native[:_SHOWN])})", evidence=evidence)
    else:
        sink.add(EXTENSION, Severity.MEDIUM, f"extension ops {listed[:600]}: they need an extension library "
                 "(native code, core.add_extension) that no OpenVINO build provides", evidence=evidence)
