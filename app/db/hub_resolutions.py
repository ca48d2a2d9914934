"""The gate's hub resolutions in the store: (repo, branch or tag) -> commit, as of ``resolved_at``.

Every replica reads a fresh row before it asks the hub, and writes what the hub said after, so a
referenced branch is asked about once per TTL by the whole deployment, not once per replica.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NamedTuple

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.db.models import HubResolutionRow

KEEP_FOR = 10  # rows older than this many TTLs are deleted on the next write: the table stays small


class Resolution(NamedTuple):
    sha: str | None  # None: the hub could not name a commit
    error: str | None
    resolved_at: datetime


def fresh(session: Session, repo: str, revision: str, *, ok_since: datetime,
          failed_since: datetime) -> Resolution | None:
    """The stored resolution, if it is newer than ``ok_since`` (a commit) or ``failed_since`` (a failure)."""
    row = session.execute(select(HubResolutionRow).where(HubResolutionRow.repo_id == repo,
                                                         HubResolutionRow.revision == revision)).scalar_one_or_none()
    if row is None:
        return None
    at = row.resolved_at
    if at <= (ok_since if row.sha is not None else failed_since):
        return None
    return Resolution(row.sha, row.error, at)


def record(session: Session, repo: str, revision: str, found: Resolution, ttl: float) -> None:
    """Store (or replace) what the hub said; delete rows long past any use."""
    values = {"repo_id": repo, "revision": revision, "sha": found.sha,
              "error": found.error[:2000] if found.error else None, "resolved_at": found.resolved_at}
    dialect = session.get_bind().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    statement = insert(HubResolutionRow).values(**values)
    session.execute(statement.on_conflict_do_update(
        index_elements=["repo_id", "revision"],
        set_={"sha": statement.excluded.sha, "error": statement.excluded.error,
              "resolved_at": statement.excluded.resolved_at}))
    stale = found.resolved_at - timedelta(seconds=max(ttl, 1.0) * KEEP_FOR)
    session.execute(delete(HubResolutionRow).where(HubResolutionRow.resolved_at < stale))
