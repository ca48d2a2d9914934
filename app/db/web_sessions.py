"""Dashboard sessions kept in the store: a login is a row, logout deletes it, revoking a token deletes its rows.

The browser's signed cookie (app.web.session) holds the session's random id; only its sha256 is
stored, like a token's. A row older than ``max_age`` no longer counts and is swept at the next login.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.db.models import WebSessionRow


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()


def start(session: Session, token_digest: str, max_age: float) -> str:
    """A new session for the token named by ``token_digest``; returns its id (for the cookie only)."""
    now = datetime.now(UTC)
    session.execute(delete(WebSessionRow).where(WebSessionRow.created_at <= now - timedelta(seconds=max_age)))
    session_id = secrets.token_urlsafe(32)
    session.add(WebSessionRow(id_digest=_digest(session_id), token_digest=token_digest, created_at=now))
    return session_id


def token_of(session: Session, session_id: str, max_age: float) -> str | None:
    """The token digest of a live session, or None once it was ended, swept or is older than ``max_age``."""
    since = datetime.now(UTC) - timedelta(seconds=max_age)
    query = select(WebSessionRow.token_digest).where(WebSessionRow.id_digest == _digest(session_id),
                                                     WebSessionRow.created_at > since)
    return session.execute(query).scalar_one_or_none()


def end(session: Session, session_id: str) -> None:
    session.execute(delete(WebSessionRow).where(WebSessionRow.id_digest == _digest(session_id)))


def end_all(session: Session, token_digest: str) -> None:
    """Every session of one token (it was revoked)."""
    session.execute(delete(WebSessionRow).where(WebSessionRow.token_digest == token_digest))
