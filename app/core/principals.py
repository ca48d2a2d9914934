"""Who is calling: the roles a token may hold, the holder of a live token, and how a secret is known again.

Pure: the store (app.db.tokens) keeps tokens by ``digest``, the use cases (app.services.tokens) and the
faces (the API's auth, the dashboard's session) read these names from here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

ROLES = ("reader", "vetter", "reviewer", "admin")  # each role may do what the ones before it may


@dataclass(frozen=True)
class Principal:
    name: str
    role: str

    def may(self, role: str) -> bool:
        return ROLES.index(self.role) >= ROLES.index(role)

    @property
    def actor(self) -> str:
        """Who did it, as jobs, reviews and the audit log record a token holder's act."""
        return f"token:{self.name}"


class TokenExpired(Exception):
    """The secret belongs to a token whose expiry has passed: refused, and told apart from unknown ones."""

    def __init__(self, name: str, expired_at: datetime) -> None:
        super().__init__(f"token {name!r} expired at {expired_at.isoformat(timespec='seconds')}")
        self.name, self.expired_at = name, expired_at


def bearer_secret(header: str) -> str | None:
    """The secret of an `Authorization: Bearer <secret>` header, or None when it is not one (the API's, the
    gate's fast path's and the Hub endpoint's one reading of it)."""
    scheme, _, secret = header.partition(" ")
    return secret.strip() if scheme.lower() == "bearer" and secret.strip() else None


def digest(secret: str) -> str:
    """What the store keeps of a token's secret (and what a dashboard session names its token by)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TokenInfo:
    name: str
    role: str
    created_at: datetime
    revoked_at: datetime | None
    expires_at: datetime | None

    def state(self, now: datetime) -> str:
        """live, revoked or expired (revoked wins: it was an act, expiry is only time passing).

        LIVE read back on a listed row, at a time the caller picks after the listing
        (tests/integration/db/test_tokens.py holds the two to the same answers); the store keeps its
        times aware, in UTC (app.db.base.UTCDateTime)."""
        if self.revoked_at is not None:
            return "revoked"
        return "expired" if self.expires_at is not None and self.expires_at <= now else "live"
