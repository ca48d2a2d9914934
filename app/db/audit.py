"""Reading the append-only audit log: what was done to one repo, or the newest decisions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import AuditRow


@dataclass(frozen=True)
class AuditEntry:
    at: datetime
    actor: str
    action: str
    subject: str  # "org/name@sha" for vets and reviews
    detail: str


def entries_for_repo(session: Session, repo_id: str, limit: int = 200,
                     leave_out: tuple[str, ...] = ()) -> list[AuditEntry]:
    """The audit rows about ``repo_id`` (any commit), newest first, but those of the actions ``leave_out``."""
    query = select(AuditRow).where(AuditRow.subject.startswith(f"{repo_id}@", autoescape=True))
    if leave_out:
        query = query.where(AuditRow.action.not_in(leave_out))
    query = query.order_by(AuditRow.id.desc()).limit(limit)
    return [_entry(row) for row in session.execute(query).scalars()]


def newest_of_action(session: Session, action: str, limit: int = 50) -> list[AuditEntry]:
    query = select(AuditRow).where(AuditRow.action == action).order_by(AuditRow.id.desc()).limit(limit)
    return [_entry(row) for row in session.execute(query).scalars()]


def _entry(row: AuditRow) -> AuditEntry:
    return AuditEntry(row.at, row.actor, row.action, row.subject, row.detail)
