"""Who pulled which commit through the Hub endpoint: recording each file served, and the lists the
dashboard shows (the Pulls page, a repo page's "Pulled by").

The endpoint records one audit row per file it served in full (app/db/pulls.py has the row's format);
the lists group them by (actor, commit).
"""

from __future__ import annotations

from app.db import pulls
from app.db.pulls import SOURCES, PullSummary
from app.db.session import Store

__all__ = ["MAX_PULLS", "SOURCES", "PullSummary", "recent_pulls", "record_pull", "repo_pulls"]
MAX_PULLS = 200  # (actor, commit) rows a list shows at most


def record_pull(store: Store, actor: str, repo: str, sha: str, path: str, size: int, source: str) -> None:
    """Record that ``actor`` was served ``path`` (``size`` bytes) of ``repo`` at commit ``sha``, from
    ``source`` (``cache`` or ``upstream``). A plain write: a store failure propagates, and so does a
    ValueError for a negative size or another source."""
    with store.session() as session:
        pulls.add_pull(session, actor, repo, sha, path, size, source)


def recent_pulls(store: Store, limit: int = 50) -> list[PullSummary]:
    """The newest ``limit`` (actor, commit) pulls of any repo, newest first."""
    with store.session() as session:
        return pulls.newest_pulls(session, min(limit, MAX_PULLS))


def repo_pulls(store: Store, repo: str, limit: int = 50) -> list[PullSummary]:
    """recent_pulls() of ``repo`` only."""
    with store.session() as session:
        return pulls.newest_pulls(session, min(limit, MAX_PULLS), repo)
