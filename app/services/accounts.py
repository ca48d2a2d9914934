"""Who a dashboard visitor is: an API token, checked at login by its secret and later by its digest."""

from __future__ import annotations

from app.db import tokens
from app.db.session import Store
from app.db.tokens import Principal


def login(store: Store, secret: str) -> tuple[Principal, str] | None:
    """The token's holder and its digest (what a session keeps), or None for an unknown or revoked token.

    Raises tokens.TokenExpired for an expired one, so the page can say so.
    """
    with store.session() as session:
        who = tokens.verify(session, secret)
    return None if who is None else (who, tokens.digest(secret))


def holder(store: Store, token_digest: str) -> Principal | None:
    """The live token a session names, or None once it was revoked or expired."""
    try:
        with store.session() as session:
            return tokens.verify_digest(session, token_digest)
    except tokens.TokenExpired:
        return None
