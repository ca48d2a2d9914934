"""What the store has been doing, for the dashboard's home counts and its recent-vets page.

Cheap by design: counts and columns, never a report's findings. The verdict counts are what each
repo's newest vet recorded; the home list itself shows the gate's view now (re-decided under the
active policy, reviews applied), so its page says which is which.
"""

from __future__ import annotations

from app.core.jobs import VetJob
from app.db import activity
from app.db.activity import StoreCounts, VetLine
from app.db.session import Store

__all__ = ["MAX_RECENT", "StoreCounts", "VetLine", "counts", "recent_jobs", "recent_vets"]
MAX_RECENT = 200  # rows a recent list shows at most


def counts(store: Store) -> StoreCounts:
    with store.session() as session:
        return activity.store_counts(session)


def recent_vets(store: Store, limit: int = 50) -> list[VetLine]:
    """The newest stored vets (reports) of any repo, from the server's jobs and the CLI alike."""
    with store.session() as session:
        return activity.recent_reports(session, min(limit, MAX_RECENT))


def recent_jobs(store: Store, limit: int = 20) -> list[VetJob]:
    """The newest vet jobs the server ran or runs, whatever their status."""
    with store.session() as session:
        return activity.recent_jobs(session, min(limit, MAX_RECENT))
