"""Keras configs: Lambda layers at any depth, references to code outside Keras."""

from __future__ import annotations

import json
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest

from app.core.findings import Severity
from app.core.limits import Limits
from app.core.manifest import ManifestFile
from app.core.pipeline import vet
from app.core.report import Report
from app.core.scanners.keras_scanner import KerasScanner
from app.core.verdict import Verdict
from app.sources.local import LocalSource
from tests.unit.core.scanners import peer_samples as s
from tests.unit.core.scanners import savedmodel_samples as sm


def _vet(path: Path, limits: Limits | None = None) -> Report:
    return s.vet_with(KerasScanner(), path, limits)


def _found(report: Report) -> list[tuple[str, Severity, str]]:
    return sorted((f.rule, f.severity, f.message) for f in report.findings)


def _functional(layers: list[dict[str, Any]]) -> dict[str, Any]:
    return {"module": "keras.src.models.functional", "class_name": "Functional",
            "registered_name": "Functional", "config": {"name": "functional", "layers": layers}}


@pytest.mark.parametrize(("path", "fmt", "handled"), [
    ("m.keras", "keras", True), ("m.h5", "hdf5", True), ("preset/config.json", "text", True),
    ("m.keras", "zip", False), ("README.md", "text", False), ("config.json", "unknown", False),
])
def test_handles(path: str, fmt: str, handled: bool) -> None:
    assert KerasScanner().handles(ManifestFile(path, 10, format=fmt)) is handled


def test_a_clean_keras_model_passes(tmp_path: Path) -> None:
    s.keras_zip(tmp_path / "m.keras", s.sequential("m", [s.dense_layer("d1"), s.dense_layer("d2")]))
    report = _vet(tmp_path)
    assert report.files[0].format == "keras" and report.files[0].scanned
    assert report.findings == () and report.verdict is Verdict.APPROVE


def test_a_lambda_layer_is_high_and_named(tmp_path: Path) -> None:
    s.keras_zip(tmp_path / "m.keras", s.sequential("m", [s.dense_layer("d"), s.lambda_layer("sneaky")]))
    [finding] = _vet(tmp_path).findings
    assert (finding.rule, finding.severity, finding.member) == ("keras-lambda", Severity.HIGH, "config.json")
    assert "'sneaky'" in finding.message and finding.scanner == "keras"
    assert finding.evidence == "$.config.layers[1]"


def test_lambdas_nested_in_models_are_all_found(tmp_path: Path) -> None:
    inner = s.sequential("inner", [s.dense_layer("d"), s.lambda_layer("deep")])
    wrapped = {"module": "keras.layers", "class_name": "TimeDistributed",
               "config": {"name": "td", "layer": s.lambda_layer("wrapped")}}
    s.keras_zip(tmp_path / "m.keras", _functional([inner, wrapped, s.lambda_layer("top")]))
    names = sorted(f.message.split("'")[1] for f in _vet(tmp_path).findings if f.rule == "keras-lambda")
    assert names == ["deep", "top", "wrapped"]


def test_code_outside_keras_is_medium_and_keras_hub_is_not(tmp_path: Path) -> None:
    custom = {"module": "my_lib.layers", "class_name": "Mine", "registered_name": "my_lib>Mine",
              "config": {"name": "mine"}}
    hub = {"module": "keras_hub.src.layers", "class_name": "Tok", "registered_name": "keras_hub>Tok",
           "config": {"name": "tok"}}
    s.keras_zip(tmp_path / "m.keras", _functional([custom, hub, s.dense_layer("d")]))
    assert [(r, sev) for r, sev, _ in _found(_vet(tmp_path))] == [("keras-external-module", Severity.MEDIUM)]


def test_registered_custom_objects_count_as_outside_code(tmp_path: Path) -> None:
    custom = {"class_name": "Mine", "registered_name": "Custom>Mine", "config": {"name": "mine"}}
    s.keras_zip(tmp_path / "m.keras", _functional([custom]))
    [finding] = _vet(tmp_path).findings
    assert finding.rule == "keras-external-module" and "'Custom'" in finding.message


@pytest.mark.advisory("CVE-2025-1550")
@pytest.mark.parametrize("reference", [
    {"module": "keras.utils", "class_name": "function", "config": "get_file", "registered_name": "get_file"},
    {"module": "keras.config", "class_name": "function", "config": "enable_unsafe_deserialization",
     "registered_name": "enable_unsafe_deserialization"},
    {"module": "os", "class_name": "function", "config": "system", "registered_name": "system"},
    {"module": "subprocess", "class_name": "Popen", "config": {}},
])
def test_system_modules_and_safe_mode_bypasses_are_high(tmp_path: Path, reference: dict[str, Any]) -> None:
    layer: dict[str, object] = {"module": "keras.layers", "class_name": "Activation",
             "config": {"name": "act", "activation": reference}}
    s.keras_zip(tmp_path / "m.keras", s.sequential("m", [layer]))
    [finding] = _vet(tmp_path).findings
    assert (finding.rule, finding.severity) == ("keras-dangerous-reference", Severity.HIGH)


def test_every_duplicate_config_entry_is_checked(tmp_path: Path) -> None:
    path = s.keras_zip(tmp_path / "m.keras", s.sequential("m", [s.dense_layer("d")]))
    with warnings.catch_warnings(), zipfile.ZipFile(path, "a") as zf:
        warnings.simplefilter("ignore")
        zf.writestr("config.json", json.dumps(s.sequential("m", [s.lambda_layer("hidden")])))
    assert [f.rule for f in _vet(tmp_path).findings] == ["keras-lambda"]


def test_a_config_that_is_not_json_fails_closed(tmp_path: Path) -> None:
    s.keras_zip(tmp_path / "m.keras", b'{"class_name": "Sequential", ')
    report = _vet(tmp_path)
    assert [f.rule for f in report.findings] == ["scan-error"] and not report.files[0].scanned


def test_absurd_nesting_fails_closed_without_crashing(tmp_path: Path) -> None:
    s.keras_zip(tmp_path / "m.keras", b"[" * 200_000 + b"]" * 200_000)
    assert [f.rule for f in _vet(tmp_path).findings] == ["scan-error"]


def test_an_oversized_config_is_a_limit(tmp_path: Path) -> None:
    layers = [s.dense_layer(f"d{i}") for i in range(50)]
    s.keras_zip(tmp_path / "m.keras", s.sequential("m", layers))
    report = _vet(tmp_path, Limits(max_text_bytes=1000))
    assert [f.rule for f in report.findings] == ["limit-exceeded"]


def test_a_big_keras_archive_is_vetted_from_its_config_alone(tmp_path: Path) -> None:
    config = json.dumps(s.sequential("m", [s.lambda_layer("l")])).encode()
    s.sparse_zip(tmp_path / "big.keras", {"metadata.json": b"{}", "config.json": config,
                                          "model.weights.h5": 1024**3})
    source = LocalSource(tmp_path)
    report = vet(source, [KerasScanner()])
    assert report.files[0].format == "keras"
    assert [f.rule for f in report.findings] == ["keras-lambda"]
    assert source.bytes_read < report.stats.repo_bytes // 100


def test_h5_model_config_is_walked_and_weights_only_h5_passes(tmp_path: Path) -> None:
    s.h5_model(tmp_path / "model.h5", _functional([s.sequential("inner", [s.lambda_layer("deep")])]))
    s.h5_model(tmp_path / "tf_model.h5", None)
    report = _vet(tmp_path)
    assert [(f.path, f.rule) for f in report.findings] == [("model.h5", "keras-lambda")]
    assert all(f.scanned for f in report.files)


def test_a_corrupt_h5_fails_closed(tmp_path: Path) -> None:
    pytest.importorskip("h5py")
    (tmp_path / "model.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(64))
    assert [f.rule for f in _vet(tmp_path).findings] == ["scan-error"]


def test_preset_config_json_is_checked_only_when_it_is_a_keras_object(tmp_path: Path) -> None:
    (tmp_path / "preset").mkdir()
    (tmp_path / "preset" / "config.json").write_text(json.dumps(_functional([s.lambda_layer("l")])))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "module": "os"}))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{ not json")
    report = _vet(tmp_path)
    assert [(f.path, f.rule) for f in report.findings] == [("preset/config.json", "keras-lambda")]
    assert all(f.scanned for f in report.files)


def _saved_metadata(*objects: dict[str, Any]) -> bytes:
    """keras_metadata.pb as tf_keras writes it: SavedMetadata.nodes, each a SavedObject with
    node_id (2), node_path (3), identifier (4) and the metadata JSON (5)."""
    nodes = (sm.int_field(2, i) + sm.len_field(3, f"root.layer-{i}") + sm.len_field(4, "_tf_keras_layer")
             + sm.len_field(5, json.dumps(obj)) for i, obj in enumerate(objects))
    return b"".join(sm.len_field(1, node) for node in nodes)


def _tf_keras_layer(class_name: str, **config: Any) -> dict[str, Any]:
    return {"name": class_name.lower(), "trainable": True, "class_name": class_name, "config": config}


def _vet_metadata(tmp_path: Path, data: bytes) -> Report:
    (tmp_path / "tf").mkdir(exist_ok=True)
    (tmp_path / "tf" / "keras_metadata.pb").write_bytes(data)
    return _vet(tmp_path)


def test_keras_metadata_is_handled_by_name() -> None:
    assert KerasScanner().handles(ManifestFile("tf/keras_metadata.pb", 10, format="unknown"))


def test_a_clean_keras_metadata_passes(tmp_path: Path) -> None:
    report = _vet_metadata(tmp_path, _saved_metadata(_tf_keras_layer("Dense", units=2)))
    assert report.findings == () and report.files[0].scanned and report.verdict is Verdict.APPROVE


def test_a_lambda_in_keras_metadata_is_high_and_names_its_node(tmp_path: Path) -> None:
    code = {"class_name": "__lambda__", "config": {"code": "4wEAAAAAAAAA"}}
    data = _saved_metadata(_tf_keras_layer("Dense"), _tf_keras_layer("Lambda", name="lam", function=code))
    [finding] = _vet_metadata(tmp_path, data).findings
    assert (finding.rule, finding.severity, finding.member) == ("keras-lambda", Severity.HIGH, "root.layer-1")


@pytest.mark.parametrize("data", [
    b"", b"\x0a\x05abc", sm.len_field(1, sm.len_field(5, "{not json")), sm.len_field(1, sm.len_field(3, b"\xff")),
], ids=["empty", "truncated", "not-json", "path-not-utf8"])
def test_a_broken_keras_metadata_fails_closed(tmp_path: Path, data: bytes) -> None:
    report = _vet_metadata(tmp_path, data)
    assert [f.rule for f in report.findings] == ["scan-error"] and report.verdict is Verdict.REJECT
