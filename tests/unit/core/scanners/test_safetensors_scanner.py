"""SafetensorsScanner: files written in the real format by hand (length + JSON header + zeros)."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import pytest

from app.core.findings import Severity
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners.safetensors_scanner import DTYPE_BITS, MAX_HEADER_BYTES, SafetensorsScanner
from app.sources.local import LocalSource

Spec = tuple[str, list[int]]  # (dtype, shape)


Header = tuple[dict[str, Any], int]


def header_for(tensors: dict[str, Spec], metadata: dict[str, str] | None = None) -> Header:
    """A header laid out as the safetensors library writes it: tensors back to back from 0."""
    header: dict[str, Any] = {"__metadata__": metadata} if metadata is not None else {}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = math.prod(shape) * DTYPE_BITS[dtype] // 8
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    return header, offset


def encode(header: Any, data_size: int, *, raw: bytes | None = None, length: int | None = None) -> bytes:
    body = raw if raw is not None else json.dumps(header).encode()
    body += b" " * (-len(body) % 8)  # the library pads the header to 8 bytes with spaces
    n = len(body) if length is None else length
    return struct.pack("<Q", n) + body + bytes(data_size)


def vet_file(tmp_path: Path, data: bytes, name: str = "model.safetensors") -> Report:
    (tmp_path / name).write_bytes(data)
    return vet(LocalSource(tmp_path), [SafetensorsScanner()], options=VetOptions(workers=1))


def messages(report: Report) -> list[str]:
    assert all(f.severity is Severity.HIGH for f in report.findings)
    return [f.message for f in report.findings if f.rule == "malformed-safetensors"]


# ---- benign --------------------------------------------------------------------------------

def test_ordinary_checkpoint_is_clean(tmp_path: Path) -> None:
    header, size = header_for(
        {"embed.weight": ("BF16", [32, 16]), "norm.weight": ("F32", [16]), "step": ("I64", [])},
        metadata={"format": "pt"},
    )
    report = vet_file(tmp_path, encode(header, size))
    assert report.files[0].format == "safetensors"
    assert report.findings == ()
    assert report.files[0].scanned


def test_nvfp4_and_other_current_dtypes_pass(tmp_path: Path) -> None:
    header, size = header_for({
        "mlp.weight": ("U8", [64, 32]),  # NVFP4 packs two e2m1 values per byte
        "mlp.weight_scale": ("F8_E4M3", [64, 4]),
        "mlp.weight_scale_2": ("F32", []),
        "mx.blocks": ("F4", [3, 2]),  # 6 x 4 bits = 3 bytes
        "mx.scales": ("F8_E8M0", [3]),
        "fp6": ("F6_E2M3", [4]),  # 4 x 6 bits = 3 bytes
        "rocm": ("F8_E4M3FNUZ", [2]),
        "rot": ("C64", [2]),
        "empty": ("F16", [0, 4]),
    })
    assert vet_file(tmp_path, encode(header, size)).findings == ()


def test_empty_file_and_null_metadata_are_valid(tmp_path: Path) -> None:
    assert vet_file(tmp_path, encode({"__metadata__": None}, 0)).findings == ()


def test_tensors_listed_out_of_offset_order_are_fine(tmp_path: Path) -> None:
    header, size = header_for({"a": ("F32", [4]), "b": ("F32", [2])})
    reordered = {"b": header["b"], "a": header["a"]}
    assert vet_file(tmp_path, encode(reordered, size)).findings == ()


def test_large_sparse_shard_reads_only_the_header(tmp_path: Path) -> None:
    tensors = {f"model.layers.{i // 8}.mlp.experts.{i % 8}.w": ("BF16", [1024, 1024]) for i in range(4000)}
    header, size = header_for(tensors, metadata={"format": "pt"})
    head = encode(header, 0)
    path = tmp_path / "model-00001-of-00042.safetensors"
    path.write_bytes(head)
    with path.open("r+b") as fh:
        fh.truncate(len(head) + size)  # ~8 GB, sparse: the data is never written or read
    report = vet(LocalSource(tmp_path), [SafetensorsScanner()], options=VetOptions(workers=1))
    assert report.findings == ()
    header_length = len(head) - 8
    assert report.stats.bytes_read <= 8 + header_length + 4096  # + the pipeline's format sniff
    assert report.stats.repo_bytes > 8 * 10**9


# ---- hostile / malformed -------------------------------------------------------------------

def good() -> Header:
    return header_for({"w": ("F32", [2, 2]), "b": ("F32", [2])})


def test_absurd_header_length(tmp_path: Path) -> None:
    header, size = good()
    [message] = messages(vet_file(tmp_path, encode(header, size, length=2**63)))
    assert f"exceeds the {MAX_HEADER_BYTES}-byte cap" in message


def test_header_length_past_end_of_file(tmp_path: Path) -> None:
    header, size = good()
    [message] = messages(vet_file(tmp_path, encode(header, size, length=50_000)))
    assert "runs past the end" in message


def test_file_shorter_than_the_length_prefix(tmp_path: Path) -> None:
    [message] = messages(vet_file(tmp_path, b"\x10\x00"))
    assert "shorter than the 8-byte header length" in message


def test_non_safetensors_content_under_a_safetensors_name(tmp_path: Path) -> None:
    report = vet_file(tmp_path, b"\x80\x02}q\x00." + bytes(64))  # a pickle wearing the name
    assert report.files[0].format != "safetensors"
    assert len(messages(report)) == 1


def test_benign_file_with_another_name_is_not_claimed(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    report = vet(LocalSource(tmp_path), [SafetensorsScanner()], options=VetOptions(workers=1))
    assert report.findings[0].rule == "unscanned"  # no scanner took it: not ours


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}\xff}', "not UTF-8"),
        (b' {"w": 1}', "does not start with '{'"),
        (b'{"w": ', "not valid JSON"),
        (b'{"w": NaN}', "not valid JSON"),
        (b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
         b'"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}', "duplicate key 'a'"),
        (b'{' + b'[' * 100_000 + b']' * 100_000 + b'}', "not valid JSON"),
    ],
)
def test_header_that_is_not_a_clean_json_object(tmp_path: Path, raw: bytes, expected: str) -> None:
    [message] = messages(vet_file(tmp_path, encode(None, 8, raw=raw)))
    assert expected in message


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"dtype": "F128", "shape": [1], "data_offsets": [0, 16]}, "unknown dtype 'F128'"),
        ({"dtype": ["F32"], "shape": [4], "data_offsets": [0, 16]}, "unknown dtype ['F32']"),
        ({"dtype": "F32", "shape": [-1], "data_offsets": [0, 16]}, "not a list of non-negative integers"),
        ({"dtype": "F32", "shape": [2.0], "data_offsets": [0, 16]}, "not a list of non-negative integers"),
        ({"dtype": "F32", "shape": [True], "data_offsets": [0, 16]}, "not a list of non-negative integers"),
        ({"dtype": "F32", "shape": [4], "data_offsets": [0]}, "is not [begin, end]"),
        ({"dtype": "F32", "shape": [4], "data_offsets": [16, 0]}, "begin 16 > end 0"),
        ({"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}, "needs 12 bytes, data_offsets span 16"),
        ({"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}, "12 bits, not a whole number of bytes"),
        ({"dtype": "F32", "shape": [8], "data_offsets": [0, 32]}, "past the 16-byte data region"),
        ({"dtype": "F32", "shape": [4], "data_offsets": [0, 16], "__loader__": "x"}, "must have exactly"),
        ("not-an-object", "must have exactly"),
    ],
)
def test_bad_tensor_entries(tmp_path: Path, entry: Any, expected: str) -> None:
    report = vet_file(tmp_path, encode({"w": entry}, 16))
    [finding] = report.findings
    assert finding.rule == "malformed-safetensors"
    assert expected in finding.message
    assert finding.evidence == "w"


def test_overlapping_tensors(tmp_path: Path) -> None:
    header, size = good()
    header["b"]["data_offsets"] = [8, 16]  # inside w's [0, 16)
    found = messages(vet_file(tmp_path, encode(header, size)))
    assert any("overlaps tensor 'w'" in m for m in found)


def test_gap_and_trailing_bytes_are_rejected_like_the_reference_loader(tmp_path: Path) -> None:
    header, size = header_for({"w": ("F32", [4])})
    header["w"]["data_offsets"] = [8, 24]
    found = messages(vet_file(tmp_path, encode(header, size + 8 + 100)))
    assert any("8 unused bytes before tensor 'w'" in m for m in found)
    assert any("100 bytes after the last tensor" in m for m in found)


def test_metadata_must_map_strings_to_strings(tmp_path: Path) -> None:
    header, size = good()
    header["__metadata__"] = {"format": "pt", "config": {"nested": 1}}
    [message] = messages(vet_file(tmp_path, encode(header, size)))
    assert "__metadata__['config'] is not a string" in message


def test_a_header_wrong_everywhere_is_reported_with_a_cap(tmp_path: Path) -> None:
    header = {f"t{i}": {"dtype": "F99", "shape": [1], "data_offsets": [0, 1]} for i in range(50)}
    found = messages(vet_file(tmp_path, encode(header, 1)))
    assert len(found) == 11
    assert "40 more header problems" in found[-1]
