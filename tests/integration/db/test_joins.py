"""The report -> revision join is written once, in app/db/joins.py."""

from __future__ import annotations

from pathlib import Path

APP = Path(__file__).resolve().parents[3] / "app"


def test_the_report_revision_join_is_written_only_in_db_joins() -> None:
    writers = {str(p.relative_to(APP)) for p in APP.rglob("*.py")
               if "ReportRow.revision_pk == RevisionRow.id" in p.read_text(encoding="utf-8")}
    assert writers == {"db/joins.py"}
