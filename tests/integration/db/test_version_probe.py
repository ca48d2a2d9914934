"""VersionProbe: store_version() on a dedicated connection, for the gate's fast path.

It must see every report and review committed elsewhere by the very next ask (no transaction left
open pins an old snapshot), agree with store_version(), and come back after its connection broke.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from app.core.principals import digest
from app.db import tokens
from app.db.models import ReviewRow
from app.db.session import Store
from app.db.version import VersionProbe, repos_written_since, store_version
from tests.integration.api.stored import policy, report, save

SHA = "a" * 40



def _store_version(store: Store) -> tuple[int, int]:
    with store.engine.connect() as conn:
        return store_version(conn)


def test_the_probe_sees_each_commit_made_elsewhere_at_once(store: Store) -> None:
    probe = VersionProbe(store.engine)
    other = Store(store.url)  # another engine: as another process would write
    try:
        assert probe() == (0, 0)
        report_id = save(other, report("nvidia/model", SHA, under=policy("default")))
        assert probe() == (report_id, 0) == _store_version(store)
        with other.session() as session:
            session.add(ReviewRow(report_pk=report_id, decision="approve", reason="ok", reviewer="r", role="reviewer"))
        reviewed = probe()
        assert reviewed[0] == report_id and reviewed[1] > 0 and reviewed == _store_version(store)
    finally:
        probe.close()
        other.close()


def test_the_probe_reconnects_after_its_connection_broke(store: Store) -> None:
    probe = VersionProbe(store.engine)
    try:
        assert probe() == (0, 0)
        probe._conn.close()  # what a restarted database or a dropped socket leaves behind
        with pytest.raises(Exception):  # noqa: B017  (the driver's own error: sqlite3's or psycopg's)
            probe()
        report_id = save(store, report("nvidia/model", SHA, under=policy("default")))
        assert probe() == (report_id, 0)
    finally:
        probe.close()


@pytest.mark.postgres
def test_the_probe_leaves_no_transaction_open_on_postgresql(store: Store) -> None:
    if store.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL only")
    probe = VersionProbe(store.engine)
    try:
        probe()
        with store.engine.connect() as conn:
            idle = conn.execute(text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                     "AND state = 'idle in transaction'")).scalar_one()
        assert idle == 0
    finally:
        probe.close()


def test_a_token_is_live_until_its_expiry_as_verify_says(store: Store) -> None:
    expiry = datetime(2026, 6, 1, 12, 0, 0, 500000, tzinfo=UTC)
    with store.session() as session:
        expiring = digest(tokens.create(session, "ci", "reader", "test", expires_at=expiry))
        forever = digest(tokens.create(session, "forever", "reader", "test"))
        revoked = digest(tokens.create(session, "gone", "reader", "test"))
        tokens.revoke(session, "gone", "test")
    probe = VersionProbe(store.engine)
    try:
        second = timedelta(seconds=1)
        assert [probe.with_token(expiring, now)[1] for now in (expiry - second, expiry, expiry + second)] == [
            True, False, False]
        assert probe.with_token(forever, expiry + 1000 * second)[1] is True
        assert probe.with_token(revoked, expiry - second)[1] is False
        assert probe.with_token(digest("hfv_unknown"))[1] is False
        assert probe.with_token(forever)[0] == probe()
    finally:
        probe.close()


def test_the_probe_names_the_repos_written_since_as_the_store_does(store: Store) -> None:
    probe = VersionProbe(store.engine)
    try:
        first = save(store, report("nvidia/model", SHA, under=policy("default")))
        before = probe()
        save(store, report("nvidia/other", SHA, under=policy("default")))
        with store.session() as session:  # a review of an older report names that report's repo
            session.add(ReviewRow(report_pk=first, decision="approve", reason="ok", reviewer="r", role="reviewer"))
        with store.engine.connect() as conn:
            expected = repos_written_since(conn, before)
        assert probe.written_since(before) == expected == {"nvidia/other", "nvidia/model"}
        assert probe.written_since(probe()) == set()
        assert probe.written_since((0, 0)) == {"nvidia/model", "nvidia/other"}
    finally:
        probe.close()
