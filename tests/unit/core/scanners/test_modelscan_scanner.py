"""modelscan as a corroborating engine: its scanner classes on streams chosen by sniffing."""

from __future__ import annotations

import pickle
import struct
from pathlib import Path

import numpy as np
import pytest
from modelscan.settings import DEFAULT_SETTINGS

from app.core.findings import Severity
from app.core.limits import Limits
from app.core.manifest import ManifestFile
from app.core.report import Report
from app.core.scanners.modelscan_scanner import ModelscanScanner, rule_for_issue
from app.core.verdict import Verdict
from tests.unit.core.scanners import peer_samples as s


def _vet(path: Path, limits: Limits | None = None) -> Report:
    return s.vet_with(ModelscanScanner(), path, limits)


_rules = s.rules_at


def test_version_is_the_library_version() -> None:
    assert ModelscanScanner().version() == "0.8.8"


@pytest.mark.parametrize(("path", "fmt", "handled"), [
    ("a.bin", "pickle", True), ("a.bin", "pytorch-zip", True), ("a.bin", "torch-legacy", True),
    ("a.bin", "numpy", True), ("a.bin", "numpy-npz", True), ("a.bin", "keras", True),
    ("a.bin", "hdf5", True), ("m/saved_model.pb", "unknown", False), ("m/keras_metadata.pb", "unknown", False),
    ("a.pkl", "safetensors", False), ("a.pkl", "7z", False), ("x.pb", "unknown", False),
])
def test_handles(path: str, fmt: str, handled: bool) -> None:
    assert ModelscanScanner().handles(ManifestFile(path, 10, format=fmt)) is handled


def test_rules_name_each_denylist_entry_with_its_severity() -> None:
    rules = {rule.id: rule.severity for rule in ModelscanScanner.rules}
    assert rules["modelscan:os"] is Severity.CRITICAL
    assert rules["modelscan:builtins.eval"] is Severity.CRITICAL
    assert rules["modelscan:webbrowser"] is Severity.HIGH
    assert rules["modelscan:unknown"] is Severity.CRITICAL
    assert rules["modelscan:lambda"] is Severity.MEDIUM


@pytest.mark.parametrize(("module", "operator", "level", "rule"), [
    ("posix", "system", "CRITICAL", "modelscan:posix"),
    ("builtins", "getattribute", "CRITICAL", "modelscan:builtins.getattr"),  # substring match
    ("requests.api", "get", "HIGH", "modelscan:requests.api"),
    ("unknown", "unknown", "CRITICAL", "modelscan:unknown"),
    ("Keras", "Lambda", "MEDIUM", "modelscan:lambda"),
    ("Tensorflow", "ReadFile", "HIGH", "modelscan:unsafe-operator"),
])
def test_issues_map_to_the_denylist_entry_that_matched(
    module: str, operator: str, level: str, rule: str
) -> None:
    assert rule_for_issue(DEFAULT_SETTINGS, module, operator, level) == (rule, Severity[level])


def test_a_pickle_named_safetensors_is_scanned_as_a_pickle(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(s.reduce_call())
    report = _vet(tmp_path)
    assert _rules(report, "model.safetensors") == [("modelscan:posix", Severity.CRITICAL, None)]
    assert report.verdict is Verdict.REJECT


def test_benign_checkpoints_have_no_findings(tmp_path: Path) -> None:
    (tmp_path / "plain.pkl").write_bytes(pickle.dumps({"lr": 0.1, "steps": [1, 2, 3]}))
    s.torch_zip(tmp_path / "pytorch_model.bin")
    s.torch_zip(tmp_path / "param.pt", s.torch_data_pkl(parameter=True))
    (tmp_path / "legacy.pt").write_bytes(s.legacy_torch(s.torch_data_pkl()))
    np.save(tmp_path / "arr.npy", np.arange(12, dtype=np.float32))  # modelscan's own npy path crashes here
    np.savez(tmp_path / "arrs.npz", a=np.ones(3), b=np.zeros((2, 2)))
    report = _vet(tmp_path)
    assert report.findings == ()
    assert all(f.scanned for f in report.files)


def test_payload_in_a_torch_zip_names_the_member(tmp_path: Path) -> None:
    s.torch_zip(tmp_path / "model.bin", s.reduce_call("builtins", "eval", "print(1)"))
    expected = [("modelscan:builtins.eval", Severity.CRITICAL, "archive/data.pkl")]
    assert _rules(_vet(tmp_path), "model.bin") == expected


def test_payload_in_the_data_pickle_of_a_legacy_torch_file(tmp_path: Path) -> None:
    # modelscan's PyTorchUnsafeOpScan alone reads only the magic-number pickle and misses this.
    (tmp_path / "old.pt").write_bytes(s.legacy_torch(s.reduce_call("subprocess", "run")))
    assert _rules(_vet(tmp_path), "old.pt") == [("modelscan:subprocess", Severity.CRITICAL, None)]


def test_object_arrays_in_npy_and_npz(tmp_path: Path) -> None:
    evil_npy = s.npy("|O", (1,), s.reduce_call())
    (tmp_path / "x.npy").write_bytes(evil_npy)
    s.write_zip(tmp_path / "x.npz", {"ok.npy": s.npy("<f4", (0,), b""), "evil.npy": evil_npy})
    report = _vet(tmp_path)
    assert _rules(report, "x.npy") == [("modelscan:posix", Severity.CRITICAL, None)]
    assert _rules(report, "x.npz") == [("modelscan:posix", Severity.CRITICAL, "evil.npy")]


def test_a_broken_stream_fails_closed(tmp_path: Path) -> None:
    (tmp_path / "w.bin").write_bytes(s.broken_after_payload())
    report = _vet(tmp_path)
    [finding] = report.findings
    assert finding.rule == "scan-error" and "PICKLE_GENOPS" in finding.message
    assert not report.files[0].scanned and report.verdict is Verdict.REJECT


def test_an_encrypted_flag_member_fails_instead_of_skipping_the_zip(tmp_path: Path) -> None:
    path = s.torch_zip(tmp_path / "model.pt", s.reduce_call())
    data = bytearray(path.read_bytes())
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature)
        struct.pack_into("<H", data, at + flag_at, 1)  # data.pkl is the first entry of each table
    path.write_bytes(bytes(data))
    report = _vet(tmp_path)
    assert "scan-error" in [f.rule for f in report.findings]
    assert not report.files[0].scanned


def test_keras_lambda_via_modelscan_without_tensorflow(tmp_path: Path) -> None:
    s.keras_zip(tmp_path / "lam.keras", s.sequential("m", [s.dense_layer("d"), s.lambda_layer("l")]))
    s.keras_zip(tmp_path / "ok.keras", s.sequential("m", [s.dense_layer("d")]))
    report = _vet(tmp_path)
    assert _rules(report, "lam.keras") == [("modelscan:lambda", Severity.MEDIUM, "config.json")]
    assert _rules(report, "ok.keras") == []
    assert all(f.scanned for f in report.files)


def test_keras_config_that_is_not_json_fails(tmp_path: Path) -> None:
    s.keras_zip(tmp_path / "bad.keras", b"{not json")
    assert [f.rule for f in _vet(tmp_path).findings] == ["scan-error"]


def test_h5_lambda_and_weights_only_h5(tmp_path: Path) -> None:
    s.h5_model(tmp_path / "model.h5", s.sequential("m", [s.lambda_layer("l")]))
    s.h5_model(tmp_path / "tf_model.h5", None)
    report = _vet(tmp_path)
    assert _rules(report, "model.h5") == [("modelscan:lambda", Severity.MEDIUM, None)]
    assert _rules(report, "tf_model.h5") == [("modelscan:skipped", Severity.INFO, None)]
    assert all(f.scanned for f in report.files)
