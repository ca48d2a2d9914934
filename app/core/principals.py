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


def digest(secret: str) -> str:
    """What the store keeps of a token's secret (and what a dashboard session names its token by)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()
