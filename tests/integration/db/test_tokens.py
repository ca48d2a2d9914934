"""API tokens in the store (SQLite and PostgreSQL): expiry is checked on every use, and counted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from app.core.principals import Principal, TokenExpired
from app.db import tokens
from app.db.models import AuditRow
from app.db.session import Store


def make(store: Store, name: str, expires_at: datetime | None) -> str:
    with store.session() as session:
        return tokens.create(session, name, "vetter", actor="test", expires_at=expires_at)


def test_a_token_is_valid_until_its_expiry_and_refused_after(store: Store) -> None:
    now = datetime.now(UTC)
    secret = make(store, "ci", now + timedelta(hours=1))
    with store.session() as session:
        assert tokens.verify(session, secret, now=now) == Principal("ci", "vetter")
        with pytest.raises(TokenExpired) as caught:
            tokens.verify(session, secret, now=now + timedelta(hours=1))
    assert caught.value.name == "ci"
    assert abs(caught.value.expired_at - (now + timedelta(hours=1))) < timedelta(seconds=1)


def test_a_token_without_expiry_stays_valid(store: Store) -> None:
    secret = make(store, "forever", None)
    with store.session() as session:
        later = datetime.now(UTC) + timedelta(days=3650)
        assert tokens.verify(session, secret, now=later) == Principal("forever", "vetter")


def test_an_expired_token_is_not_live_and_is_listed_as_expired(store: Store) -> None:
    now = datetime.now(UTC)
    make(store, "old", now - timedelta(seconds=1))
    make(store, "new", now + timedelta(days=1))
    with store.session() as session:
        assert tokens.live_count(session, now=now) == 1
        assert tokens.live_count(session, now=now + timedelta(days=2)) == 0
        states = {t.name: t.state(now) for t in tokens.listing(session)}
    assert states == {"old": "expired", "new": "live"}


def test_a_revoked_token_stays_revoked_even_before_its_expiry(store: Store) -> None:
    secret = make(store, "gone", datetime.now(UTC) + timedelta(days=1))
    with store.session() as session:
        assert tokens.revoke(session, "gone", actor="test")
    with store.session() as session:
        assert tokens.verify(session, secret) is None
        assert [t.state(datetime.now(UTC)) for t in tokens.listing(session)] == ["revoked"]


def test_the_expiry_is_in_the_audit_log(store: Store) -> None:
    make(store, "ci", datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC))
    make(store, "forever", None)
    with store.session() as session:
        details = dict(session.execute(select(AuditRow.subject, AuditRow.detail)
                                       .where(AuditRow.action == "token-create")).all())
    assert "2030-01-02T03:04:05" in details["ci"] and "never" in details["forever"]
