"""API tokens: created once (the secret is returned, never stored), checked by digest, revocable."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import AuditRow, TokenRow

ROLES = ("reader", "vetter", "reviewer", "admin")  # each role may do what the ones before it may
PREFIX = "hfv_"


@dataclass(frozen=True)
class Principal:
    name: str
    role: str

    def may(self, role: str) -> bool:
        return ROLES.index(self.role) >= ROLES.index(role)


@dataclass(frozen=True)
class TokenInfo:
    name: str
    role: str
    created_at: datetime
    revoked_at: datetime | None


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create(session: Session, name: str, role: str, actor: str) -> str:
    """A new token's secret (shown once). Raises ValueError for an unknown role or a taken name."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: one of {', '.join(ROLES)}")
    if session.execute(select(TokenRow).where(TokenRow.name == name)).scalar_one_or_none() is not None:
        raise ValueError(f"a token named {name!r} exists already")
    secret = PREFIX + secrets.token_urlsafe(32)
    session.add(TokenRow(name=name, role=role, digest=digest(secret), created_at=datetime.now(UTC)))
    session.add(AuditRow(actor=actor, action="token-create", subject=name, detail=role))
    return secret


def verify(session: Session, secret: str) -> Principal | None:
    """Who holds ``secret``, if it is a live token. The digest comparison takes constant time."""
    wanted = digest(secret)
    row = session.execute(select(TokenRow).where(TokenRow.digest == wanted)).scalar_one_or_none()
    if row is None or row.revoked_at is not None or not hmac.compare_digest(row.digest, wanted):
        return None
    return Principal(row.name, row.role)


def revoke(session: Session, name: str, actor: str) -> bool:
    row = session.execute(select(TokenRow).where(TokenRow.name == name)).scalar_one_or_none()
    if row is None or row.revoked_at is not None:
        return False
    row.revoked_at = datetime.now(UTC)
    session.add(AuditRow(actor=actor, action="token-revoke", subject=name, detail=row.role))
    return True


def listing(session: Session) -> list[TokenInfo]:
    rows = session.execute(select(TokenRow).order_by(TokenRow.created_at)).scalars()
    return [TokenInfo(r.name, r.role, r.created_at, r.revoked_at) for r in rows]


def live_count(session: Session) -> int:
    return session.execute(select(func.count()).select_from(TokenRow).where(TokenRow.revoked_at.is_(None))).scalar_one()
