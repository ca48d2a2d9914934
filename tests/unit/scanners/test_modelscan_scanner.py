"""modelscan as a corroborating engine: its scanner classes on streams chosen by sniffing."""

from __future__ import annotations

import json
import pickle
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from modelscan.settings import DEFAULT_SETTINGS

from app.core.findings import Severity
from app.core.limits import Limits
from app.core.manifest import ManifestFile
from app.core.pipeline import vet
from app.core.report import Report
from app.core.scanners.modelscan_scanner import ModelscanScanner, rule_for_issue
from app.core.verdict import Verdict
from app.sources.local import LocalSource
from tests.unit.scanners import peer_samples as s

RULE_IDS = {rule.id for rule in ModelscanScanner.rules}


def _vet(path: Path, limits: Limits | None = None) -> Report:
    report = vet(LocalSource(path), [ModelscanScanner()], limits=limits)
    assert {f.rule for f in report.findings} <= RULE_IDS | {"unscanned"}
    assert all(f.scanner in ("modelscan", "pipeline") for f in report.findings)
    return report


def _rules(report: Report, path: str) -> list[tuple[str, Severity, str | None]]:
    return sorted((f.rule, f.severity, f.member) for f in report.findings if f.path == path)


def test_version_is_the_library_version() -> None:
    assert ModelscanScanner().version() == "0.8.8"


@pytest.mark.parametrize(("path", "fmt", "handled"), [
    ("a.bin", "pickle", True), ("a.bin", "pytorch-zip", True), ("a.bin", "torch-legacy", True),
    ("a.bin", "numpy", True), ("a.bin", "numpy-npz", True), ("a.bin", "keras", True),
    ("a.bin", "hdf5", True), ("m/saved_model.pb", "unknown", True), ("m/keras_metadata.pb", "unknown", True),
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


def _h5(path: Path, config: dict[str, Any] | None) -> None:
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "w") as h5:
        h5.create_dataset("w", data=np.ones(4))
        if config is not None:
            h5.attrs["model_config"] = json.dumps(config)


def test_h5_lambda_and_weights_only_h5(tmp_path: Path) -> None:
    _h5(tmp_path / "model.h5", s.sequential("m", [s.lambda_layer("l")]))
    _h5(tmp_path / "tf_model.h5", None)
    report = _vet(tmp_path)
    assert _rules(report, "model.h5") == [("modelscan:lambda", Severity.MEDIUM, None)]
    assert _rules(report, "tf_model.h5") == [("modelscan:skipped", Severity.INFO, None)]
    assert all(f.scanned for f in report.files)


def test_h5_without_h5py_is_skipped_not_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "model.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(64))
    monkeypatch.setitem(sys.modules, "h5py", None)  # find_spec("h5py") is now None
    report = _vet(tmp_path)
    assert not report.files[0].scanned and report.verdict is Verdict.REVIEW


def test_saved_model_is_skipped_and_left_for_review(tmp_path: Path) -> None:
    (tmp_path / "tf").mkdir()
    (tmp_path / "tf" / "saved_model.pb").write_bytes(b"\x08\x01\x12\x04\x0a\x02\x08\x01")
    report = _vet(tmp_path)
    assert not report.files[0].scanned  # matched by name, whatever its bytes sniff as
    assert report.findings == () and report.verdict is Verdict.REVIEW


def test_joblib_arrays_stop_the_engine_without_failing_the_file(tmp_path: Path) -> None:
    (tmp_path / "model.joblib").write_bytes(s.joblib_with_array())
    report = _vet(tmp_path)
    assert "modelscan:joblib-partial" in [f.rule for f in report.findings]
    assert all(f.severity is Severity.INFO for f in report.findings) and report.files[0].scanned


def test_too_many_opcodes_is_a_limit(tmp_path: Path) -> None:
    (tmp_path / "many.pkl").write_bytes(pickle.dumps(list(range(3000)), protocol=2))
    report = _vet(tmp_path, Limits(max_pickle_opcodes=1000))
    assert [f.rule for f in report.findings] == ["limit-exceeded"]


def test_a_gigabyte_numeric_npy_is_vetted_from_its_header(tmp_path: Path) -> None:
    s.sparse_npy(tmp_path / "big.npy", 256 * 1024 * 1024)
    source = LocalSource(tmp_path)
    report = vet(source, [ModelscanScanner()])
    assert report.files[0].scanned and report.findings == ()
    assert source.bytes_read < report.stats.repo_bytes // 100


@pytest.fixture(scope="module")
def sparse_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("sparse")
    s.sparse_torch_zip(folder / "pytorch_model.bin", 1536 * 1024 * 1024)
    yield folder


def test_a_sparse_gigabyte_checkpoint_is_vetted_by_reading_a_sliver(sparse_checkpoint: Path) -> None:
    source = LocalSource(sparse_checkpoint)
    report = vet(source, [ModelscanScanner()])
    size = report.stats.repo_bytes
    assert size > 1024**3
    assert report.files[0].scanned and report.findings == ()
    assert source.bytes_read < size // 100, source.bytes_read
