"""hfvet-pickle end to end through vet(): every hostile sample is caught, no benign one is."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

from app.core.findings import Finding, Severity, Status
from app.core.formats.blobs import BytesBlob
from app.core.limits import Limits
from app.core.manifest import ManifestFile, RepoIdentity
from app.core.pipeline import VetOptions, vet
from app.core.ports import SourceError
from app.core.scanners.base import ScanContext
from app.core.scanners.pickle_scanner import HANDLED_FORMATS, PickleScanner
from app.sources.local import LocalSource
from tests.samples import benign, hostile


def scan_dir(folder: Path, limits: Limits | None = None) -> list[Finding]:
    report = vet(LocalSource(folder), [PickleScanner()], options=VetOptions(limits=limits, workers=1))
    return [f for f in report.findings if f.scanner == PickleScanner.name]


def serious(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity.rank >= Severity.HIGH.rank]


@pytest.mark.parametrize("sample", hostile.SAMPLES, ids=lambda s: s.name)
def test_every_hostile_sample_is_caught(sample: hostile.Sample, tmp_path: Path) -> None:
    sample.write(tmp_path)
    found = serious(scan_dir(tmp_path))
    assert found, f"{sample.name}: no high/critical finding"
    assert sample.expect in {f.rule for f in found}


@pytest.mark.parametrize("sample", benign.SAMPLES, ids=lambda s: s.name)
def test_no_benign_sample_is_high(sample: benign.Sample, tmp_path: Path) -> None:
    sample.write(tmp_path)
    assert serious(scan_dir(tmp_path)) == []


def test_a_benign_repo_together_has_nothing_above_low(tmp_path: Path) -> None:
    for sample in benign.SAMPLES:
        sample.write(tmp_path)
    assert [f for f in scan_dir(tmp_path) if f.severity.rank > Severity.LOW.rank] == []


def test_every_emitted_rule_is_declared(tmp_path: Path) -> None:
    for sample in hostile.SAMPLES:
        sample.write(tmp_path / sample.name)
    declared = {r.id: r.severity for r in PickleScanner.rules}
    for finding in scan_dir(tmp_path):
        assert finding.rule in declared
        assert finding.severity.rank <= declared[finding.rule].rank


def test_handles_the_pickle_container_formats() -> None:
    scanner = PickleScanner()
    for fmt in HANDLED_FORMATS:
        assert scanner.handles(ManifestFile("x", 1, format=fmt))
    for fmt in ("safetensors", "gguf", "elf", "pe", "hdf5", "empty"):
        assert not scanner.handles(ManifestFile("x", 1, format=fmt))


def _sparse_torch_zip(path: Path, big: int) -> None:
    """archive/data.pkl, then a stored `big`-byte storage record left as a hole in the file."""
    data_pkl, _ = benign.torch_pickle()
    members = [("archive/data.pkl", data_pkl, zlib.crc32(data_pkl), len(data_pkl)),
               ("archive/data/0", None, 0, big), ("archive/version", b"3\n", zlib.crc32(b"3\n"), 2)]
    central = b""
    with path.open("wb") as fh:
        for name, data, crc, size in members:
            offset, raw = fh.tell(), name.encode()
            fh.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, crc, size, size, len(raw), 0) + raw)
            if data is None:
                fh.seek(size, 1)
            else:
                fh.write(data)
            central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, crc, size, size,
                                   len(raw), 0, 0, 0, 0, 0, offset) + raw
        start = fh.tell()
        fh.write(central)
        fh.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 3, 3, len(central), start, 0))


def test_multi_gb_torch_zip_reads_under_one_percent(tmp_path: Path) -> None:
    path = tmp_path / "pytorch_model.bin"
    _sparse_torch_zip(path, 2 * 1024**3)
    report = vet(LocalSource(tmp_path), [PickleScanner()], options=VetOptions(workers=1))
    assert report.files[0].format == "pytorch-zip" and report.files[0].scanned
    assert [f for f in report.findings if f.severity.rank >= Severity.MEDIUM.rank] == []
    assert report.stats.bytes_read < path.stat().st_size / 100


def test_read_budget_is_a_limit_finding(tmp_path: Path) -> None:
    hostile.SAMPLES[0].write(tmp_path)
    benign.SAMPLES[14].write(tmp_path)  # a torch zip
    found = scan_dir(tmp_path, Limits(max_read_bytes_per_file=64))
    assert {f.rule for f in found} >= {"limit-exceeded"}


class _FailingBlob(BytesBlob):
    def read(self, offset: int, length: int) -> bytes:
        if offset > 100:
            raise SourceError("connection reset")
        return super().read(offset, length)


def test_source_errors_fail_the_scan_and_keep_earlier_findings() -> None:
    data = hostile.by_protocol(2) + hostile.by_protocol(2).replace(b"posix", b"nt\x00\x00\x00") * 20
    ctx = ScanContext(ManifestFile("w.pkl", len(data), format="pickle"), _FailingBlob(data), Limits(),
                      RepoIdentity(None))
    outcome = PickleScanner().scan(ctx)
    assert outcome.status is Status.FAILED
    assert {"pickle-dangerous-global", "scan-error"} <= {f.rule for f in outcome.findings}
