"""UnknownContentScanner: unrecognised binaries are named with their first bytes; known formats are not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners.unknown_scanner import UnknownContentScanner
from app.sources.local import LocalSource


def vet_file(tmp_path: Path, name: str, data: bytes) -> Report:
    (tmp_path / name).write_bytes(data)
    return vet(LocalSource(tmp_path), [UnknownContentScanner()], options=VetOptions(workers=1))


def test_random_binary_is_low_with_hex_evidence(tmp_path: Path) -> None:
    data = bytes([0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x01]) + os.urandom(2000)
    report = vet_file(tmp_path, "model.bin", data)
    [finding] = report.findings
    assert report.files[0].format == "unknown"
    assert (finding.rule, finding.severity) == ("unrecognized-binary", Severity.LOW)
    assert finding.evidence == data[:16].hex()
    assert "2006-byte file" in finding.message
    assert report.files[0].scanned


def test_short_file_gives_what_it_has(tmp_path: Path) -> None:
    [finding] = vet_file(tmp_path, "blob", b"\x00\xff\x01").findings
    assert finding.evidence == "00ff01"


@pytest.mark.parametrize(
    ("name", "data"),
    [("README.md", b"# a model card\n"), ("lib.so", b"\x7fELF\x02\x01\x01" + bytes(100))],
)
def test_recognised_formats_are_left_to_their_scanners(tmp_path: Path, name: str, data: bytes) -> None:
    report = vet_file(tmp_path, name, data)
    assert report.files[0].format != "unknown"
    assert [f.rule for f in report.findings] == ["unscanned"]  # the pipeline's, not ours


def test_empty_file_is_not_unrecognized(tmp_path: Path) -> None:
    report = vet_file(tmp_path, "empty.bin", b"")
    assert report.files[0].format == "empty"
    assert report.findings == ()  # zero bytes: nothing to vet, and nothing unknown
