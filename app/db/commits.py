"""The store's vetted commits and repos, asked by prefix and in bulk (app.services.commits resolves ids with them)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.db.joins import reports_of
from app.db.models import RepoRow, RevisionRow


def vetted_commits(session: Session, repo_id: str, prefix: str, limit: int) -> list[str]:
    """Up to ``limit`` commits of ``repo_id`` with a stored report whose sha starts with ``prefix``, sorted.

    ``prefix`` is lowercase hex (app.core.ids.is_short_sha), so it has no LIKE wildcard to escape."""
    query = (reports_of(RevisionRow.sha).where(RepoRow.repo_id == repo_id, RevisionRow.sha.startswith(prefix))
             .distinct().order_by(RevisionRow.sha).limit(limit))
    return list(session.execute(query).scalars())


def vetted_repo_ids(session: Session, limit: int) -> list[str]:
    """Up to ``limit`` repo ids with a stored report, sorted."""
    query = reports_of(RepoRow.repo_id).distinct().order_by(RepoRow.repo_id).limit(limit)
    return list(session.execute(query).scalars())


def has_reports(session: Session, repo_id: str) -> bool:
    """Whether ``repo_id`` has any stored report."""
    return session.execute(reports_of(RepoRow.id).where(RepoRow.repo_id == repo_id).limit(1)).first() is not None
