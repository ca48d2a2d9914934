"""TensorFlow checkpoint indexes (recognised by their table footer) and Paddle programs
(ProgramDesc written byte by byte; field numbers from paddle/fluid/framework/framework.proto)."""

from __future__ import annotations

from pathlib import Path

from app.core.findings import Severity
from app.core.formats.sniff import TF_TABLE_MAGIC
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners import all_scanners
from app.sources.local import LocalSource
from tests.corpus.onnx_writer import field_bytes, field_text, field_varint


def _vet(tmp_path: Path, files: dict[str, bytes]) -> Report:
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    return vet(LocalSource(tmp_path), all_scanners(), options=VetOptions(workers=1))


def _program(*op_types: str) -> bytes:
    ops = b"".join(field_bytes(4, field_bytes(1, field_text(1, "X")) + field_text(3, op)) for op in op_types)
    return field_bytes(1, field_varint(1, 0) + field_varint(2, 0) + ops)


# tensorflow/core/lib/io/format.cc Footer::DecodeFrom: the table's last 8 bytes are its magic.
def test_a_checkpoint_index_is_recognised_as_data(tmp_path: Path) -> None:
    index = b"\x00" * 100 + b"\x00" * 40 + TF_TABLE_MAGIC
    report = _vet(tmp_path, {"variables/variables.index": index})
    assert report.files[0].format == "tf-checkpoint-index"
    assert [(f.rule, f.severity) for f in report.findings] == [("tf-checkpoint", Severity.INFO)]


def test_a_plain_paddle_program_is_clean(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"inference.pdmodel": _program("feed", "conv2d", "relu", "fetch")})
    assert [f for f in report.findings if f.scanner == "paddle"] == []
    legacy = _vet(tmp_path / "legacy", {"model/__model__": _program("feed", "py_func", "fetch")})
    assert [f.rule for f in legacy.findings if f.scanner == "paddle"] == ["paddle-python-op"]


# paddle/fluid/operators/py_func_op.cc calls a registered Python callable; save_combine writes file_path.
def test_python_and_file_ops_in_a_paddle_program(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"inference.pdmodel": _program("feed", "py_func", "save_combine", "fetch")})
    found = sorted((f.rule, f.severity, f.evidence) for f in report.findings if f.scanner == "paddle")
    assert found == [("paddle-io-op", Severity.HIGH, "save_combine"),
                     ("paddle-python-op", Severity.CRITICAL, "py_func")]
