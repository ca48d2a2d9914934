"""The report codec: what dump writes, load reads back; what does not parse is a clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core import report_json
from app.core.findings import Severity
from app.core.pipeline import vet
from app.core.report import Report
from app.core.verdict import Verdict
from tests.fakes import MemorySource, TextScanner


def _report() -> Report:
    source = MemorySource({"README.md": b"EVIL", "a.txt": b"ok"}, revision="a" * 40)
    return vet(source, [TextScanner(Severity.MEDIUM)])


def test_dump_then_load_is_the_same_report() -> None:
    report = _report()
    again = report_json.load(json.loads(report_json.dumps(report)))
    assert again == report
    assert again.verdict is Verdict.REVIEW and again.findings[0].severity is Severity.MEDIUM


def test_dump_has_the_contract_keys() -> None:
    doc = report_json.dump(_report())
    assert list(doc) == ["repo", "revision", "verdict", "reasons", "policy", "findings", "files", "stats",
                         "scanners", "identity", "references", "closure"]
    assert doc["files"][0] == {"path": "README.md", "size": 4, "sha256": None, "blob_id": None,
                               "format": "text", "scanned": True, "bytes_read": 4}


def test_newer_keys_are_ignored_on_load() -> None:
    doc = report_json.dump(_report()) | {"added_later": 1}
    doc["findings"][0]["added_later"] = True
    assert report_json.load(doc).repo == "org/name"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("verdict"), "verdict"),
        (lambda d: d.update(verdict="maybe"), "verdict"),
        (lambda d: d["files"][0].pop("scanned"), "scanned"),
        (lambda d: d["findings"][0].update(severity="urgent"), "severity"),
        (lambda d: d["stats"].update(bytes_read=-1), "bytes_read"),
    ],
)
def test_malformed_reports_name_what_is_wrong(mutate: object, message: str) -> None:
    doc = report_json.dump(_report())
    mutate(doc)  # type: ignore[operator]
    with pytest.raises(report_json.ReportFormatError, match=message):
        report_json.load(doc, "stored.json")


def test_not_an_object_and_unreadable_files_are_errors(tmp_path: Path) -> None:
    with pytest.raises(report_json.ReportFormatError, match="JSON object"):
        report_json.load([1, 2])
    bad = tmp_path / "r.json"
    bad.write_text("{not json")
    with pytest.raises(report_json.ReportFormatError, match="cannot read"):
        report_json.read(bad)
