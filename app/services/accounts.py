"""Who a dashboard visitor is: an API token, checked at login by its secret, then a session kept in the store."""

from __future__ import annotations

from app.db import tokens, web_sessions
from app.db.session import Store
from app.db.tokens import Principal

SESSION_MAX_AGE = 8 * 3600  # a working day; then log in again (the cookie says the same)


def login(store: Store, secret: str) -> tuple[Principal, str] | None:
    """The token's holder and its digest (what a session keeps), or None for an unknown or revoked token.

    Raises tokens.TokenExpired for an expired one, so the page can say so.
    """
    with store.session() as session:
        who = tokens.verify(session, secret)
    return None if who is None else (who, tokens.digest(secret))


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
            return None if token_digest is None else tokens.verify_digest(session, token_digest)
    except tokens.TokenExpired:
        return None
