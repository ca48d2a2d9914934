"""API tokens and who holds them: create, list, revoke, verify; and a dashboard visitor's login, a session
kept in the store, and logout. What `hfvet token`, the API's auth and the dashboard ask of the store.

A token's holder, its roles and TokenExpired are app.core.principals'; the rows are app.db.tokens'.
"""

from __future__ import annotations

from datetime import datetime

from app.core.principals import Principal, TokenExpired, TokenInfo, digest
from app.db import tokens as rows
from app.db import web_sessions
from app.db.session import Store

SESSION_MAX_AGE = 8 * 3600  # a working day; then log in again (the cookie says the same)


def create(store: Store, name: str, role: str, *, actor: str, expires_at: datetime | None = None) -> str:
    """A new token's secret (shown once), valid until ``expires_at`` (None: never).

    Raises ValueError for an unknown role or a taken name."""
    with store.session() as session:
        return rows.create(session, name, role, actor, expires_at=expires_at)


def revoke(store: Store, name: str, *, actor: str) -> bool:
    """Revoke the live token ``name`` and end its dashboard sessions; False if there is none."""
    with store.session() as session:
        return rows.revoke(session, name, actor)


def listing(store: Store) -> list[TokenInfo]:
    """Every token, oldest first: name, role, times; never the secret."""
    with store.session() as session:
        return rows.listing(session)


def any_live(store: Store) -> bool:
    """Is some token neither revoked nor expired now?"""
    with store.session() as session:
        return rows.live_count(session) > 0


def verify(store: Store, secret: str) -> Principal | None:
    """Who holds ``secret``, if it is a live token; None if unknown or revoked; TokenExpired if it expired."""
    with store.session() as session:
        return rows.verify(session, secret)


def login(store: Store, secret: str) -> tuple[Principal, str] | None:
    """The token's holder and its digest (what a session keeps), or None for an unknown or revoked token.

    Raises TokenExpired for an expired one, so the page can say so.
    """
    who = verify(store, secret)
    return None if who is None else (who, digest(secret))


def start_session(store: Store, token_digest: str) -> str:
    """A new dashboard session for the token, kept in the store; its id goes into the cookie."""
    with store.session() as session:
        return web_sessions.start(session, token_digest, SESSION_MAX_AGE)


def end_session(store: Store, session_id: str) -> None:
    """Logout: the session's row goes, so a copy of its cookie authenticates no one afterwards."""
    with store.session() as session:
        web_sessions.end(session, session_id)


def holder(store: Store, session_id: str) -> Principal | None:
    """The live token a live session belongs to, or None once the session ended or the token was
    revoked or expired."""
    try:
        with store.session() as session:
            token_digest = web_sessions.token_of(session, session_id, SESSION_MAX_AGE)
            return None if token_digest is None else rows.verify_digest(session, token_digest)
    except TokenExpired:
        return None
