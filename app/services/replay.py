"""The store's reports as `hfvet policy diff --stored` replays them: the newest of every stored commit."""

from __future__ import annotations

from app.core.policy.replay import StoredReport, stored_report
from app.db.repository import newest_reports
from app.db.session import Store


def stored_reports(store: Store) -> list[StoredReport]:
    """The newest report of every commit of every repo, each named ``store:<repo>@<sha12>#<report id>``."""
    with store.session() as session:
        rows = newest_reports(session)
    return [stored_report(r.document, f"store:{r.repo_id}@{r.sha[:12]}#{r.id}") for r in rows]
