"""A token is live by one definition, app.db.tokens.LIVE: verify, live_count and the gate's VersionProbe ask it,
and the listing's TokenInfo.state reads it back on a listed row the same way."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.core.principals import TokenExpired, digest
from app.db import tokens
from app.db.session import Store
from app.db.version import VersionProbe

APP = Path(__file__).resolve().parents[3] / "app"


def test_every_reading_of_liveness_agrees(store: Store) -> None:
    now = datetime.now(UTC)
    secrets = {name: _make(store, name, expiry) for name, expiry in [
        ("never", None), ("later", now + timedelta(days=1)), ("past", now - timedelta(seconds=1)),
        ("now", now)]}  # expired at the very moment it expires
    with store.session() as session:
        assert tokens.revoke(session, "later", actor="test")
    secrets["kept"] = _make(store, "kept", now + timedelta(hours=1))
    probe = VersionProbe(store.engine)
    try:
        with store.session() as session:
            listed = {t.name: t.state(now) == "live" for t in tokens.listing(session)}
            for name, secret in secrets.items():
                try:
                    verified = tokens.verify(session, secret, now=now) is not None
                except TokenExpired:
                    verified = False
                assert verified == listed[name] == probe.with_token(digest(secret), now)[1], name
            assert tokens.live_count(session, now=now) == sum(listed.values()) == 2
    finally:
        probe.close()


def test_liveness_is_written_only_in_app_db_tokens() -> None:
    pattern = re.compile(r"expires_at\s*>|revoked_at\.is_\(None\)")
    written = sorted(str(p.relative_to(APP)) for p in APP.rglob("*.py") if pattern.search(p.read_text()))
    assert written == ["db/tokens.py"]


def _make(store: Store, name: str, expires_at: datetime | None) -> str:
    with store.session() as session:
        return tokens.create(session, name, "reader", actor="test", expires_at=expires_at)
