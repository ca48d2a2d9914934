"""Every stored timestamp comes back aware, the instant it was, on SQLite too: the one repair is UTCDateTime."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from sqlalchemy import select

from app.db.models import AuditRow
from app.db.session import Store

APP = Path(__file__).resolve().parents[3] / "app"


def test_an_aware_time_reads_back_as_the_same_instant_in_utc(store: Store) -> None:
    east = datetime(2026, 12, 3, 10, 30, tzinfo=timezone(timedelta(hours=2)))
    with store.session() as session:
        session.add(AuditRow(at=east, actor="test", action="probe", subject="s", detail=""))
    with store.session() as session:
        at = session.execute(select(AuditRow.at).where(AuditRow.action == "probe")).scalar_one()
    assert at == east
    assert at.astimezone(UTC) == datetime(2026, 12, 3, 8, 30, tzinfo=UTC)


def test_no_reader_repairs_a_naive_time_but_the_column_type() -> None:
    repairing = {str(p.relative_to(APP)) for p in APP.rglob("*.py")
                 if "replace(tzinfo=" in p.read_text(encoding="utf-8")}
    assert repairing == {"db/base.py"}
