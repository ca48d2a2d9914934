"""TfliteScanner and the flatbuffer walk: models written byte by byte (tests/corpus/tflite_writer)."""

from __future__ import annotations

import io
import struct
import tarfile
from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.formats.blobs import BudgetBlob, BytesBlob
from app.core.formats.detect import Format, detect_format
from app.core.formats.flatbuffer import FlatError
from app.core.formats.tflite_model import read_model
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners import all_scanners
from app.sources.local import LocalSource
from tests.corpus import tflite_writer as w


def _vet(tmp_path: Path, data: bytes, name: str = "model.tflite") -> Report:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / name).write_bytes(data)
    return vet(LocalSource(tmp_path), all_scanners(), options=VetOptions(workers=1))


def _tflite(report: Report) -> list[tuple[str, Severity, str | None]]:
    return sorted((f.rule, f.severity, f.evidence) for f in report.findings if f.scanner == "tflite")


def test_an_ordinary_model_with_a_stock_custom_op_is_clean(tmp_path: Path) -> None:
    data = w.model([w.CONV_2D, w.RELU, w.FULLY_CONNECTED, "TFLite_Detection_PostProcess"], weights=bytes(5000))
    assert detect_format(data[:4096], len(data)) == Format.TFLITE
    model = read_model(BytesBlob(data))
    assert [c.builtin for c in model.codes] == [3, 19, 9, 32]
    assert model.codes[3].custom == "TFLite_Detection_PostProcess"
    report = _vet(tmp_path, data)
    assert report.findings == () and report.files[0].format == "tflite"


# tensorflow/lite/delegates/flex: a "Flex<Op>" custom op runs TensorFlow's <Op> kernel.
@pytest.mark.parametrize("op", ["FlexWriteFile", "FlexReadFile", "FlexPyFunc", "FlexEagerPyFunc", "FlexMatchingFiles"])
def test_flex_ops_that_run_python_or_touch_files_are_critical(tmp_path: Path, op: str) -> None:
    report = _vet(tmp_path, w.model([w.CONV_2D, op]))
    assert ("tflite-flex-dangerous-op", Severity.CRITICAL, op) in _tflite(report)


def test_other_flex_and_custom_ops_are_medium(tmp_path: Path) -> None:
    report = _vet(tmp_path / "a", w.model([w.CONV_2D, "FlexMatMul", "FastAttention"]))
    assert _tflite(report) == [("tflite-custom-op", Severity.MEDIUM, "FastAttention"),
                               ("tflite-flex-op", Severity.MEDIUM, "FlexMatMul")]
    # mediapipe/util/tflite/cpu_op_resolver.cc registers these for MediaPipe's own models
    mediapipe = w.model([w.CONV_2D, "Convolution2DTransposeBias", "MaxPoolingWithArgmax2D", "TransformLandmarks"])
    assert _tflite(_vet(tmp_path / "b", mediapipe)) == []


def test_a_wrong_schema_version_or_bad_offsets_are_malformed(tmp_path: Path) -> None:
    assert [r for r, _s, _e in _tflite(_vet(tmp_path, w.model([w.RELU], version=2)))] == ["malformed-tflite"]
    broken = bytearray(w.model([w.RELU]))
    struct.pack_into("<I", broken, 0, 1 << 30)  # the root table past the end
    with pytest.raises(FlatError):
        read_model(BytesBlob(bytes(broken)))


def test_the_walk_reads_the_operator_codes_not_the_weights() -> None:
    data = w.model([w.CONV_2D, w.SOFTMAX], weights=bytes(8 << 20))
    counted = BudgetBlob(BytesBlob(data), len(data))
    assert len(read_model(counted).codes) == 2
    assert counted.bytes_read < 64 * 1024


# torch/serialization.py _legacy_load: tarfile.open comes first, whatever the first member is named.
def test_a_tar_whose_first_name_spells_tfl3_is_still_a_tar() -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        info = tarfile.TarInfo("abcdTFL3pickle")
        info.size = 4
        archive.addfile(info, io.BytesIO(b"data"))
    data = buffer.getvalue()
    assert data[4:8] == b"TFL3" and detect_format(data[:4096], len(data)) == Format.TAR
