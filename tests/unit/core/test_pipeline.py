from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

from app.core import report_json
from app.core.findings import ScanOutcome, Severity
from app.core.limits import Limits
from app.core.manifest import ManifestFile
from app.core.pipeline import VetOptions, vet
from app.core.scanners.base import ScanContext
from app.core.verdict import Verdict
from app.sources.local import LocalSource
from tests.fakes import CrashingScanner, MemorySource, TextScanner


def test_clean_text_is_approved(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("hello")
    report = vet(LocalSource(tmp_path), [TextScanner()])
    assert report.verdict is Verdict.APPROVE
    assert report.files[0].format == "text" and report.files[0].scanned
    assert report.stats.bytes_read == 5 and report.stats.repo_bytes == 5


def test_high_finding_rejects_and_medium_reviews(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("EVIL")
    assert vet(LocalSource(tmp_path), [TextScanner()]).verdict is Verdict.REJECT
    assert vet(LocalSource(tmp_path), [TextScanner(Severity.MEDIUM)]).verdict is Verdict.REVIEW


def test_a_crashing_scanner_fails_closed(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("fine")
    report = vet(LocalSource(tmp_path), [CrashingScanner()])
    assert report.verdict is Verdict.REJECT
    assert [f.rule for f in report.findings] == ["scan-error"]
    assert "boom" in report.findings[0].message
    assert not report.files[0].scanned


class SkippingScanner(TextScanner):
    name: ClassVar[str] = "skipping"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        return ScanOutcome.skipped(self.name, ctx.file.path, "needs a library hfvet does not install")


def test_a_skip_is_a_finding_so_no_threshold_reads_the_file_as_clean(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("fine")
    report = vet(LocalSource(tmp_path), [SkippingScanner(), TextScanner()])
    [note] = report.findings
    assert (note.rule, note.severity, note.scanner) == ("unscanned", Severity.MEDIUM, "pipeline")
    assert note.message == ("skipping skipped the file: needs a library hfvet does not install; "
                            "it was not fully vetted")
    assert not report.files[0].scanned and report.verdict is Verdict.REVIEW


def test_file_no_scanner_handles_is_unscanned_and_never_approved(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02\xff" * 10)
    report = vet(LocalSource(tmp_path), [TextScanner()])
    assert report.verdict is Verdict.REVIEW
    assert report.findings[0].rule == "unscanned"
    assert report.files[0].format == "unknown" and not report.files[0].scanned


def test_several_scanners_share_one_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x" * 1000)
    report = vet(LocalSource(tmp_path), [TextScanner(), TextScanner(Severity.LOW)])
    assert report.stats.bytes_read == 1000  # the per-file cache served the second scanner


def test_each_file_reports_the_bytes_read_of_it(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x" * 1000)
    (tmp_path / "b.txt").write_text("y" * 300)
    report = vet(LocalSource(tmp_path), [TextScanner(), TextScanner(Severity.LOW)])
    read = {f.path: f.bytes_read for f in report.files}
    assert read == {"a.txt": 1000, "b.txt": 300}
    assert sum(read.values()) == report.stats.bytes_read
    again = report_json.load(json.loads(report_json.dumps(report)))
    assert {f.path: f.bytes_read for f in again.files} == read


def test_report_json_contract(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("EVIL")
    doc = report_json.dump(vet(LocalSource(tmp_path, repo_id="org/name"), [TextScanner()]))
    assert set(doc) == {
        "repo", "revision", "verdict", "reasons", "policy", "findings", "files", "stats", "scanners", "identity",
        "references", "closure",
    }
    assert doc["repo"] == "org/name" and doc["verdict"] == "reject"
    assert doc["references"] == [] and doc["closure"] == []
    assert doc["findings"][0] == {
        "path": "a.txt", "member": None, "scanner": "fake-text", "rule": "evil",
        "severity": "high", "message": "EVIL", "evidence": None,
    }
    assert doc["files"][0]["format"] == "text" and doc["files"][0]["scanned"] is True
    assert set(doc["stats"]) == {"files", "repo_bytes", "bytes_read", "seconds"}
    assert doc["scanners"] == {"fake-text": "1"}


def test_empty_files_need_no_scanner(tmp_path: Path) -> None:
    (tmp_path / ".gitkeep").write_bytes(b"")
    report = vet(LocalSource(tmp_path), [TextScanner()])
    assert report.verdict is Verdict.APPROVE
    assert report.files[0].format == "empty" and report.files[0].scanned


class UndecidedScanner(CrashingScanner):
    name: ClassVar[str] = "undecided"

    def handles(self, file: ManifestFile) -> bool:
        raise ValueError("cannot tell")


def test_a_scanner_whose_handles_raises_still_runs_and_fails_closed(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("fine")
    report = vet(LocalSource(tmp_path), [UndecidedScanner()])
    assert report.verdict is Verdict.REJECT
    assert [f.rule for f in report.findings] == ["scan-error"]


def test_files_not_started_before_the_deadline_are_unscanned_and_never_approved(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("fine")
    report = vet(LocalSource(tmp_path), [TextScanner()], options=VetOptions(limits=Limits(max_vet_seconds=-1)))
    assert report.verdict is Verdict.REJECT
    assert [f.rule for f in report.findings] == ["vet-timeout"]
    assert not report.files[0].scanned


def test_a_memory_source_vets_like_a_directory(tmp_path: Path) -> None:
    files = {"README.md": b"EVIL here", "notes.txt": b"fine"}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    in_memory = vet(MemorySource(files), [TextScanner()])
    on_disk = vet(LocalSource(tmp_path, repo_id="org/name"), [TextScanner()])
    assert [(f.path, f.rule) for f in in_memory.findings] == [(f.path, f.rule) for f in on_disk.findings]
    assert in_memory.verdict is on_disk.verdict is Verdict.REJECT
    assert in_memory.stats.bytes_read == on_disk.stats.bytes_read > 0


def test_the_unscanned_message_names_the_format_plainly(tmp_path: Path) -> None:
    (tmp_path / "blob").write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 16)  # a zstd frame nothing here scans
    report = vet(LocalSource(tmp_path), [TextScanner()])
    (finding,) = [f for f in report.findings if f.rule == "unscanned"]
    assert finding.message == "no scanner handles format 'zstd'; the file was not vetted"
