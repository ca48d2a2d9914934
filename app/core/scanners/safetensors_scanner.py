"""Safetensors header validation: the 8-byte length and the JSON header, never the tensor data.

A file is valid when the reference loader (huggingface/safetensors) would accept it:
sane header length, a UTF-8 JSON object, known dtypes, sizes that match shapes, and
tensors that tile the data region exactly (no overlap, no gap, no trailing bytes that
could hide a second file). Anything else is ``malformed-safetensors`` with the reason.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import replace
from typing import Any, ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.blobs import BudgetBlob
from app.core.formats.detect import Format
from app.core.limits import LimitExceeded
from app.core.manifest import ManifestFile
from app.core.ports import Blob, SourceError
from app.core.scanners.base import ScanContext
from app.core.scanners.text_rules import embedded_text
from app.core.tensor_layout import layout_of_header

MAX_HEADER_BYTES = 100_000_000  # the reference loader's MAX_HEADER_SIZE
MAX_REPORTED = 10  # per file; a hostile header can be wrong 4,000 times over
# Parsed JSON takes this many bytes of memory per header byte (measured ~13 for a header of
# a million one-element tensors); big headers are parsed under the shared memory budget.
PARSED_BYTES_PER_HEADER_BYTE = 16
RULE = "malformed-safetensors"
# Element widths in bits, safetensors 0.8 (F4/F6 are the OCP MX sub-byte floats).
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8,
    "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
    "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64,
}
_ENTRY_KEYS = {"dtype", "shape", "data_offsets"}


class Malformed(Exception):
    """One reason the file is not a valid safetensors file."""


class SafetensorsScanner:
    name: ClassVar[str] = "safetensors"
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(RULE, Severity.HIGH,
                 "header a loader would reject or read differently: length, JSON, dtype, shape, offsets",
                 kind=RuleKind.MALFORMED_WEIGHTS),
        RuleInfo.limit("header larger than the per-file read budget"),
        RuleInfo.scan_error("the header could not be read"),
        *embedded_text.RULES,  # __metadata__ strings get the text rules
    )

    def handles(self, file: ManifestFile) -> bool:
        # The extension is what makes a loader treat the file as safetensors, so a named
        # .safetensors file that does not sniff as one is checked (and reported) too.
        return file.format == Format.SAFETENSORS or file.path.lower().endswith(".safetensors")

    def version(self) -> str:
        return "1.0 (safetensors 0.8 dtypes)"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        try:
            with ctx.budget().reserve(_declared_length(ctx.blob) * PARSED_BYTES_PER_HEADER_BYTE):
                header, data_size = read_header(BudgetBlob(ctx.blob, ctx.limits.max_read_bytes_per_file))
                problems = validate_header(header, data_size)
                metadata = _metadata_strings(header)
                layout = None if problems else layout_of_header(header)  # a rejected header has no layout
                del header  # the parsed tree is the big buffer: free it inside the reservation
        except Malformed as exc:
            problems, metadata, layout = [(str(exc), None)], [], None
        except LimitExceeded as exc:
            sink.add("limit-exceeded", Severity.HIGH, str(exc))
            problems, metadata, layout = [], [], None
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc))
        for message, tensor in problems[:MAX_REPORTED]:
            sink.add(RULE, Severity.HIGH, message, evidence=tensor)
        if len(problems) > MAX_REPORTED:
            sink.add(RULE, Severity.HIGH, f"{len(problems) - MAX_REPORTED} more header problems not listed")
        embedded_text.check_strings(metadata, sink)
        return replace(ScanOutcome.scanned(self.name, ctx.file.path, sink.findings), layout=layout)


def _metadata_strings(header: dict[str, Any]) -> list[tuple[str, str]]:
    metadata = header.get("__metadata__")
    if not isinstance(metadata, dict):
        return []
    return [(f"__metadata__[{key!r}]", value) for key, value in metadata.items() if isinstance(value, str)]


def _declared_length(blob: Blob) -> int:
    prefix = blob.read(0, 8)
    length = struct.unpack("<Q", prefix)[0] if len(prefix) == 8 else 0
    return min(length, MAX_HEADER_BYTES, blob.size)


def read_header(blob: Blob) -> tuple[dict[str, Any], int]:
    """The parsed JSON header and the size of the data region after it."""
    prefix = blob.read(0, 8)
    if len(prefix) < 8:
        raise Malformed(f"file is {blob.size} bytes, shorter than the 8-byte header length")
    (length,) = struct.unpack("<Q", prefix)
    if length > MAX_HEADER_BYTES:
        raise Malformed(f"header length {length} exceeds the {MAX_HEADER_BYTES}-byte cap")
    if length > blob.size - 8:
        raise Malformed(f"header length {length} runs past the end of the {blob.size}-byte file")
    raw = blob.read(8, length)
    return _parse_json(raw), blob.size - 8 - length


def _parse_json(raw: bytes) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Malformed(f"header is not UTF-8 (byte {exc.start})") from exc
    if not text.startswith("{"):
        raise Malformed("header does not start with '{'")
    try:
        parsed = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except (ValueError, RecursionError) as exc:
        raise Malformed(f"header is not valid JSON: {exc}") from exc
    if not isinstance(parsed, dict):
        raise Malformed("header is not a JSON object")
    return parsed


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}: parsers disagree on which one wins")
        result[key] = value
    return result


def _no_constants(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


Problem = tuple[str, str | None]  # (message, tensor name)


def validate_header(header: dict[str, Any], data_size: int) -> list[Problem]:
    problems: list[Problem] = []
    spans: list[tuple[int, int, str]] = []
    for name, entry in header.items():
        if name == "__metadata__":
            problems.extend(_check_metadata(entry))
            continue
        try:
            begin, end = _check_entry(name, entry, data_size)
        except Malformed as exc:
            problems.append((str(exc), name))
            continue
        spans.append((begin, end, name))
    if not problems:
        problems.extend(_check_tiling(spans, data_size))
    return problems


def _check_metadata(metadata: Any) -> list[Problem]:
    if metadata is None:
        return []  # the reference loader reads null as "no metadata"
    if not isinstance(metadata, dict):
        return [("__metadata__ is not an object of strings", "__metadata__")]
    bad = [k for k, v in metadata.items() if not isinstance(v, str)]
    return [(f"__metadata__[{k!r}] is not a string", "__metadata__") for k in bad]


def _check_entry(name: str, entry: Any, data_size: int) -> tuple[int, int]:
    if not isinstance(entry, dict) or set(entry) != _ENTRY_KEYS:
        keys = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
        raise Malformed(f"tensor {name!r} must have exactly dtype, shape, data_offsets (has {keys})")
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:  # a list or object is not hashable
        raise Malformed(f"tensor {name!r} has unknown dtype {dtype!r}")
    if not isinstance(shape, list) or not all(_is_count(d) for d in shape):
        raise Malformed(f"tensor {name!r} shape {shape!r} is not a list of non-negative integers")
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_count(o) for o in offsets):
        raise Malformed(f"tensor {name!r} data_offsets {offsets!r} is not [begin, end]")
    begin, end = offsets
    if begin > end:
        raise Malformed(f"tensor {name!r} data_offsets begin {begin} > end {end}")
    bits = math.prod(shape) * DTYPE_BITS[dtype]
    if bits % 8:
        raise Malformed(f"tensor {name!r}: {dtype} x {shape} is {bits} bits, not a whole number of bytes")
    if end - begin != bits // 8:
        raise Malformed(f"tensor {name!r}: {dtype} x {shape} needs {bits // 8} bytes, "
                        f"data_offsets span {end - begin}")
    if end > data_size:
        raise Malformed(f"tensor {name!r} ends at {end}, past the {data_size}-byte data region")
    return begin, end


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_tiling(spans: list[tuple[int, int, str]], data_size: int) -> list[Problem]:
    """Tensors must cover the data region exactly once, in some order."""
    problems: list[Problem] = []
    position, previous = 0, None
    for begin, end, name in sorted(spans):
        if begin < position:
            problems.append((f"tensor {name!r} [{begin}, {end}) overlaps tensor {previous!r}", name))
        elif begin > position:
            problems.append((f"{begin - position} unused bytes before tensor {name!r}", name))
        position, previous = max(position, end), name
    if position < data_size:
        problems.append((f"{data_size - position} bytes after the last tensor: the reference loader "
                         "rejects trailing data (a second file could hide there)", None))
    return problems
