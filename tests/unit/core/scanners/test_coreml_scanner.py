"""CoremlScanner: Core ML Model protobufs written byte by byte (field numbers from coremltools'
mlmodel/format/Model.proto, NeuralNetwork.proto, LinkedModel.proto)."""

from __future__ import annotations

from pathlib import Path

from app.core.findings import Severity
from app.core.formats.detect import Format, detect_format
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners import all_scanners
from app.sources.local import LocalSource
from tests.corpus.onnx_writer import field_bytes, field_text, field_varint
from tests.unit.core.scanners import savedmodel_samples as sm

DESCRIPTION = field_bytes(2, field_bytes(1, field_text(1, "image")) + field_bytes(10, field_text(1, "scores")))


def _layer(name: str, custom_class: str | None = None) -> bytes:
    body = field_text(1, name) + field_text(2, "image") + field_text(3, "out")
    if custom_class is None:
        return body + field_bytes(140, field_varint(1, 1))  # an activation layer (ReLU params)
    return body + field_bytes(500, field_text(10, custom_class))


def _network(*layers: bytes) -> bytes:
    return field_varint(1, 4) + DESCRIPTION + field_bytes(500, b"".join(field_bytes(1, layer) for layer in layers))


def _linked(file_name: str, search_path: str) -> bytes:
    link = field_bytes(1, field_text(1, file_name)) + field_bytes(2, field_text(1, search_path))
    return field_varint(1, 4) + DESCRIPTION + field_bytes(556, field_bytes(1, link))


def _vet(tmp_path: Path, data: bytes) -> Report:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "Model.mlmodel").write_bytes(data)
    return vet(LocalSource(tmp_path), all_scanners(), options=VetOptions(workers=1))


def _coreml(report: Report) -> list[tuple[str, Severity, str | None]]:
    return sorted((f.rule, f.severity, f.evidence) for f in report.findings if f.scanner == "coreml")


def test_a_plain_network_is_detected_and_clean(tmp_path: Path) -> None:
    data = _network(_layer("relu"))
    assert detect_format(data, len(data)) == Format.COREML
    report = _vet(tmp_path, data)
    assert report.findings == () and report.files[0].format == "coreml"


# Core ML's MLCustomLayer protocol: the class named in CustomLayerParams.className is instantiated.
def test_a_custom_layer_needs_application_code(tmp_path: Path) -> None:
    report = _vet(tmp_path, _network(_layer("relu"), _layer("decode", "AAPLDecoderLayer")))
    assert _coreml(report) == [("coreml-custom-code", Severity.MEDIUM, "AAPLDecoderLayer")]


# LinkedModel.proto: "Each path can be relative (to this model) or absolute".
def test_a_linked_model_outside_the_folder_is_high(tmp_path: Path) -> None:
    assert _coreml(_vet(tmp_path / "a", _linked("Features.mlmodelc", "/private/var/models"))) == [
        ("coreml-linked-model-escape", Severity.HIGH, "/private/var/models")]
    assert _coreml(_vet(tmp_path / "b", _linked("Features.mlmodelc", ".:$BUNDLE_MAIN"))) == []


def test_a_saved_model_is_not_taken_for_core_ml() -> None:
    # saved_model.proto: schema version (1), then meta graphs (2) whose first field is a message too
    data = sm.saved_model(sm.benign_graph())
    assert detect_format(data[:4096], len(data)) not in (Format.COREML, Format.ONNX)
