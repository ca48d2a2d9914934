"""picklescan as a corroborating engine: formats by sniffing, bounded reads, errors never silent."""

from __future__ import annotations

import io
import logging
import pickle
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np
import py7zr
import pytest

from app.core.findings import Severity
from app.core.limits import Limits
from app.core.manifest import ManifestFile
from app.core.report import Report
from app.core.scanners.picklescan_scanner import PicklescanScanner, _captured_log
from app.core.verdict import Verdict
from tests.unit.core.scanners import peer_samples as s


def _vet(path: Path, limits: Limits | None = None) -> Report:
    return s.vet_with(PicklescanScanner(), path, limits)


_rules = s.rules_at


def test_version_is_the_library_version() -> None:
    assert PicklescanScanner().version() == "1.0.5"


@pytest.mark.parametrize(("fmt", "handled"), [
    ("pickle", True), ("pytorch-zip", True), ("torch-legacy", True), ("numpy", True),
    ("numpy-npz", True), ("zip", True), ("7z", True),
    ("safetensors", False), ("zlib", False), ("gzip", False), ("keras", False), ("text", False),
])
def test_handles_by_sniffed_format_not_name(fmt: str, handled: bool) -> None:
    assert PicklescanScanner().handles(ManifestFile("model.pkl", 10, format=fmt)) is handled


def test_a_pickle_named_safetensors_is_scanned_as_a_pickle(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(s.reduce_call())
    report = _vet(tmp_path)
    assert _rules(report, "model.safetensors") == [("picklescan:dangerous-global", Severity.CRITICAL, None)]
    assert report.findings[0].evidence == "posix.system"
    assert report.verdict is Verdict.REJECT


def test_benign_checkpoints_have_nothing_high(tmp_path: Path) -> None:
    (tmp_path / "plain.pkl").write_bytes(pickle.dumps({"lr": 0.1, "steps": [1, 2, 3]}))
    s.torch_zip(tmp_path / "pytorch_model.bin")
    s.torch_zip(tmp_path / "param.pt", s.torch_data_pkl(parameter=True))
    (tmp_path / "legacy.pt").write_bytes(s.legacy_torch(s.torch_data_pkl()))
    np.save(tmp_path / "arr.npy", np.arange(12, dtype=np.float32))
    np.savez(tmp_path / "arrs.npz", a=np.ones(3), b=np.zeros((2, 2)))
    report = _vet(tmp_path)
    assert all(f.severity is Severity.INFO for f in report.findings)
    assert all(f.scanned for f in report.files)
    assert report.verdict is Verdict.APPROVE


def test_globals_off_its_tiny_allowlist_are_info_evidence(tmp_path: Path) -> None:
    s.torch_zip(tmp_path / "param.pt", s.torch_data_pkl(parameter=True))
    report = _vet(tmp_path)
    [finding] = report.findings
    assert (finding.rule, finding.severity) == ("picklescan:suspicious-global", Severity.INFO)
    assert finding.member == "archive/data.pkl"
    assert finding.evidence == "torch._utils._rebuild_parameter"


def test_payload_in_a_torch_zip_names_the_member(tmp_path: Path) -> None:
    s.torch_zip(tmp_path / "model.bin", s.reduce_call("builtins", "eval", "print(1)"))
    expected = [("picklescan:dangerous-global", Severity.CRITICAL, "archive/data.pkl")]
    assert _rules(_vet(tmp_path), "model.bin") == expected


def test_payload_in_the_data_pickle_of_a_legacy_torch_file(tmp_path: Path) -> None:
    (tmp_path / "old.pt").write_bytes(s.legacy_torch(s.reduce_call()))
    assert _rules(_vet(tmp_path), "old.pt") == [("picklescan:dangerous-global", Severity.CRITICAL, None)]


def test_object_arrays_in_npy_and_npz(tmp_path: Path) -> None:
    evil_npy = s.npy("|O", (1,), s.reduce_call())
    (tmp_path / "x.npy").write_bytes(evil_npy)
    s.write_zip(tmp_path / "x.npz", {"ok.npy": s.npy("<f4", (0,), b""), "evil.npy": evil_npy})
    report = _vet(tmp_path)
    assert _rules(report, "x.npy") == [("picklescan:dangerous-global", Severity.CRITICAL, None)]
    assert _rules(report, "x.npz") == [("picklescan:dangerous-global", Severity.CRITICAL, "evil.npy")]


def test_payload_before_a_broken_stream_is_reported_and_the_scan_fails(tmp_path: Path) -> None:
    (tmp_path / "w.bin").write_bytes(s.broken_after_payload())
    report = _vet(tmp_path)
    assert _rules(report, "w.bin") == [
        ("picklescan:dangerous-global", Severity.CRITICAL, None), ("scan-error", Severity.HIGH, None),
    ]
    assert not report.files[0].scanned


def test_an_unparseable_pickle_is_a_scan_error_not_clean(tmp_path: Path) -> None:
    (tmp_path / "junk.pkl").write_bytes(b"\x80\x02\xff\xff\xff")
    report = _vet(tmp_path)
    [finding] = report.findings
    assert finding.rule == "scan-error" and "not a parseable pickle" in finding.message
    assert not report.files[0].scanned


def test_parse_failures_are_seen_even_if_logging_is_turned_down(tmp_path: Path) -> None:
    logger = logging.getLogger("picklescan")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        (tmp_path / "junk.pkl").write_bytes(b"\x80\x02\xff\xff\xff")
        assert [f.rule for f in _vet(tmp_path).findings] == ["scan-error"]
    finally:
        logger.setLevel(level)


def test_a_member_that_only_looks_like_a_pickle_is_info(tmp_path: Path) -> None:
    s.write_zip(tmp_path / "bundle.zip", {"blob": b"\x80\x02\xff" + bytes(64)})
    report = _vet(tmp_path)
    assert _rules(report, "bundle.zip") == [("picklescan:unparsed-member", Severity.INFO, "blob")]
    assert report.files[0].scanned


def test_a_pickle_inside_7z(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with py7zr.SevenZipFile(buffer, "w") as archive:
        archive.writestr(s.reduce_call(), "model.pkl")
    (tmp_path / "wrapped.7z").write_bytes(buffer.getvalue())
    assert _rules(_vet(tmp_path), "wrapped.7z") == [("picklescan:dangerous-global", Severity.CRITICAL, None)]


def test_a_big_7z_is_skipped_not_passed(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with py7zr.SevenZipFile(buffer, "w") as archive:
        archive.writestr(pickle.dumps(list(range(100))), "model.pkl")
    (tmp_path / "wrapped.7z").write_bytes(buffer.getvalue())
    report = _vet(tmp_path, Limits(max_pickle_opcodes=50))
    assert not report.files[0].scanned
    assert [(f.rule, f.severity) for f in report.findings] == [("unscanned", Severity.MEDIUM)]  # the skip, said
    assert report.findings[0].message.startswith("picklescan skipped the file: picklescan not run")
    assert report.verdict is Verdict.REVIEW


def test_an_unreadable_member_fails_instead_of_being_skipped(tmp_path: Path) -> None:
    members = {"archive/version": b"3\n", "archive/data.pkl": s.reduce_call()}
    path = s.write_zip(tmp_path / "model.pt", members)
    data = bytearray(path.read_bytes())
    second = data.find(b"PK\x03\x04", 4)
    data[second : second + 2] = b"XX"  # data.pkl's local header no longer starts with PK
    path.write_bytes(bytes(data))
    report = _vet(tmp_path)
    [finding] = report.findings
    assert finding.rule == "scan-error" and "archive/data.pkl" in finding.message


def test_log_capture_keeps_only_this_threads_records() -> None:
    # vets run scanners in a thread pool: another file's parse warning must not land here.
    logger = logging.getLogger("picklescan")
    with _captured_log() as records:
        other = threading.Thread(target=logger.warning, args=("WARNING: could not parse other as pickle: x",))
        other.start()
        other.join()
        logger.warning("WARNING: could not parse mine as pickle: y")
    assert [r.getMessage() for r in records] == ["WARNING: could not parse mine as pickle: y"]


def test_read_budget_is_a_limit(tmp_path: Path) -> None:
    (tmp_path / "big.pkl").write_bytes(pickle.dumps(b"x" * 300_000, protocol=4))
    report = _vet(tmp_path, Limits(max_read_bytes_per_file=100_000))
    assert [f.rule for f in report.findings] == ["limit-exceeded"]


def test_a_decompression_bomb_member_is_a_limit(tmp_path: Path) -> None:
    bomb = b"\x80\x02" + b"N0" * 200_000 + b"N."
    s.write_zip(tmp_path / "model.pt", {"archive/data.pkl": bomb}, compress=True)
    assert (tmp_path / "model.pt").stat().st_size < 10_000
    report = _vet(tmp_path, Limits(max_decompressed_bytes=50_000))
    assert [f.rule for f in report.findings] == ["limit-exceeded"]


def test_a_stop_after_the_pickle_is_picklescan_s_limit_not_the_file_s(tmp_path: Path) -> None:
    # numpy's own core/tests/data/numpy_2_0_array.pkl ends with b".\n": pickle.load stops at STOP
    # (Lib/pickle.py load_stop), picklescan reads on for a stacked pickle and breaks on the newline.
    (tmp_path / "array.pkl").write_bytes(pickle.dumps([1.5, None, "x"], protocol=2) + b"\n")
    (tmp_path / "state.pkl").write_bytes(pickle.dumps(OrderedDict(w=[1.5]), protocol=0) + b"\n")
    report = _vet(tmp_path)
    for name in ("array.pkl", "state.pkl"):  # picklescan words the two breaks differently
        assert ("picklescan:after-stop", Severity.INFO, None) in _rules(report, name)
        assert "scan-error" not in [rule for rule, _, _ in _rules(report, name)]


@pytest.mark.parametrize("tail", [
    b"(",  # MARK, then the end: picklescan breaks past the byte after STOP
    b"garbage",  # GET without a number: a break at an opcode, which a stacked-pickle reader would run
])
def test_other_breaks_after_a_stop_stay_scan_errors(tmp_path: Path, tail: bytes) -> None:
    (tmp_path / "array.pkl").write_bytes(pickle.dumps([1.5], protocol=2) + tail)
    report = _vet(tmp_path)
    assert ("scan-error", Severity.HIGH, None) in _rules(report, "array.pkl")
    assert "picklescan:after-stop" not in [f.rule for f in report.findings]
