"""Which branches of which repos the poller re-checks: those a vet was asked for by name."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.core.ids import is_commit
from app.db.joins import reports_of
from app.db.models import RepoRow, ReportRow

DEFAULT_BRANCH = "main"


def watched_refs(session: Session) -> dict[str, set[str]]:
    """Every stored repo with `main` and each branch or tag a report was requested under (not exact shas)."""
    query = (
        reports_of(RepoRow.repo_id, ReportRow.requested_revision)
        .distinct()
    )
    refs: dict[str, set[str]] = {}
    for repo_id, requested in session.execute(query):
        named = refs.setdefault(repo_id, {DEFAULT_BRANCH})
        if requested and not is_commit(requested):
            named.add(requested)
    return refs
