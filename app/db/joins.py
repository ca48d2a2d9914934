"""The join chain report -> revision -> repo, written once for every reader of reports."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, select

from app.db.models import RepoRow, ReportRow, RevisionRow


def reports_of(*columns: Any, with_repo: bool = True) -> Select[Any]:
    """``select(*columns)`` over the reports, each joined to its revision and (``with_repo``) that revision's repo.

    Further joins (reviews, a ranking subquery) and filters are added by the caller.
    """
    query = select(*columns).select_from(ReportRow).join(RevisionRow, ReportRow.revision_pk == RevisionRow.id)
    return query.join(RepoRow, RevisionRow.repo_pk == RepoRow.id) if with_repo else query
