"""A finished vet job's outcome, as the gate sees it now (for the dashboard's job page)."""

from __future__ import annotations

from app.core.gate import Outcome
from app.core.jobs import VetJob
from app.core.policy import LoadedPolicy
from app.db.repository import report_by_id
from app.db.session import Store
from app.services.outcomes import outcome


def job_report(store: Store, policy: LoadedPolicy, job: VetJob) -> Outcome | None:
    """The outcome of the report ``job`` stored, or None while it runs (or when it failed)."""
    if job.report_id is None:
        return None
    with store.session() as session:
        report = report_by_id(session, job.report_id)
    return None if report is None else outcome(report, policy)
