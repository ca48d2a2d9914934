"""API tokens: created once (the secret is returned, never stored), checked by digest, revocable,
and valid until their expiry (``expires_at``; None only when the creator said "never").

Who a token's holder is (Principal, ROLES, TokenExpired, digest) is app.core.principals'.
``LIVE`` is the one statement of "this token is live": every query that asks it uses it (verify,
live_count, and the gate's fast path through app.db.version.VersionProbe).
"""

from __future__ import annotations

import hmac
import secrets
from datetime import UTC, datetime

from sqlalchemy import ColumnElement, and_, bindparam, func, or_, select
from sqlalchemy.orm import Session

from app.core.principals import ROLES, Principal, TokenExpired, TokenInfo, digest
from app.db import web_sessions
from app.db.models import AuditRow, TokenRow

PREFIX = "hfv_"

# A token is live at :now when it is not revoked and its expiry (if any) is after :now: expired once
# expires_at <= now. Bind ``now`` with ``at(now)``; the parameter takes the column's type, so a query
# run through SQLAlchemy stores it as the column does (VersionProbe applies that type itself).
LIVE: ColumnElement[bool] = and_(TokenRow.revoked_at.is_(None),
                                 or_(TokenRow.expires_at.is_(None), TokenRow.expires_at > bindparam("now")))


def create(session: Session, name: str, role: str, actor: str, *, expires_at: datetime | None = None) -> str:
    """A new token's secret (shown once), valid until ``expires_at`` (None: never).

    Raises ValueError for an unknown role or a taken name."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: one of {', '.join(ROLES)}")
    if session.execute(select(TokenRow).where(TokenRow.name == name)).scalar_one_or_none() is not None:
        raise ValueError(f"a token named {name!r} exists already")
    secret = PREFIX + secrets.token_urlsafe(32)
    session.add(TokenRow(name=name, role=role, digest=digest(secret), created_at=datetime.now(UTC),
                         expires_at=expires_at))
    until = expires_at.isoformat(timespec="seconds") if expires_at else "never"
    session.add(AuditRow(actor=actor, action="token-create", subject=name, detail=f"{role}, expires {until}"))
    return secret


def verify(session: Session, secret: str, now: datetime | None = None) -> Principal | None:
    """Who holds ``secret``, if it is a live token; None if unknown or revoked; TokenExpired if expired.

    The digest comparison takes constant time."""
    return verify_digest(session, digest(secret), now)


def verify_digest(session: Session, wanted: str, now: datetime | None = None) -> Principal | None:
    """verify() for a token named by its digest (what a dashboard session keeps instead of the secret)."""
    query = select(TokenRow, LIVE.label("live")).where(TokenRow.digest == wanted)
    found = session.execute(query, at(now)).one_or_none()
    if found is None or not hmac.compare_digest(found[0].digest, wanted):
        return None
    row, live = found
    if live:
        return Principal(row.name, row.role)
    if row.revoked_at is not None or row.expires_at is None:
        return None  # revoked wins over expired: it was an act
    raise TokenExpired(row.name, row.expires_at)


def revoke(session: Session, name: str, actor: str) -> bool:
    row = session.execute(select(TokenRow).where(TokenRow.name == name)).scalar_one_or_none()
    if row is None or row.revoked_at is not None:
        return False
    row.revoked_at = datetime.now(UTC)
    web_sessions.end_all(session, row.digest)  # its dashboard sessions end with it
    session.add(AuditRow(actor=actor, action="token-revoke", subject=name, detail=row.role))
    return True


def listing(session: Session) -> list[TokenInfo]:
    rows = session.execute(select(TokenRow).order_by(TokenRow.created_at)).scalars()
    return [TokenInfo(r.name, r.role, r.created_at, r.revoked_at, r.expires_at) for r in rows]


def live_count(session: Session, now: datetime | None = None) -> int:
    """Tokens neither revoked nor expired at ``now`` (LIVE)."""
    return session.execute(select(func.count()).select_from(TokenRow).where(LIVE), at(now)).scalar_one()


def at(now: datetime | None = None) -> dict[str, datetime]:
    """LIVE's parameter: ``now`` (default: this moment) in UTC, as the store keeps its times (SQLite
    keeps no zone, so a time in another zone would compare as text in the wrong order)."""
    return {"now": (now or datetime.now(UTC)).astimezone(UTC)}
