"""Cheap reads for the dashboard's overview: store counts, the newest vets and jobs, each repo's commit order.

None of these decodes a report's findings: they read columns (and one small JSON path) only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.jobs import ACTIVE, VetJob
from app.db.jobs import to_job
from app.db.joins import reports_of
from app.db.models import RepoRow, ReportRow, RevisionRow, VetRow


@dataclass(frozen=True)
class StoreCounts:
    repos: int  # repos with at least one stored report
    commits: int  # commits with at least one stored report
    newest_verdicts: dict[str, int]  # each repo's newest report, counted by the verdict it recorded
    active_jobs: int  # vet jobs queued or running


@dataclass(frozen=True)
class VetLine:
    """One stored report as a line of a list: who vetted what, when, and what it recorded."""

    report_id: int
    repo_id: str
    sha: str
    verdict: str
    policy_name: str
    decided_at: datetime
    requested_revision: str | None
    requested_by: str
    local_scan: bool  # recorded by `hfvet scan` of local files: no hub endpoint


def store_counts(session: Session) -> StoreCounts:
    newest = reports_of(func.max(ReportRow.id).label("id"), with_repo=False).group_by(RevisionRow.repo_pk).subquery()
    verdicts = session.execute(
        select(ReportRow.verdict, func.count()).join(newest, ReportRow.id == newest.c.id).group_by(ReportRow.verdict)
    ).all()
    repos = session.execute(reports_of(func.count(func.distinct(RevisionRow.repo_pk)), with_repo=False)).scalar_one()
    commits = session.execute(reports_of(func.count(func.distinct(ReportRow.revision_pk)), with_repo=False)) \
        .scalar_one()
    active = session.execute(select(func.count()).select_from(VetRow).where(VetRow.status.in_(ACTIVE))).scalar_one()
    return StoreCounts(repos, commits, {str(v): int(n) for v, n in verdicts}, active)


def recent_reports(session: Session, limit: int) -> list[VetLine]:
    """The newest ``limit`` stored reports of any repo, newest first."""
    query = (
        reports_of(ReportRow.id, RepoRow.repo_id, RevisionRow.sha, ReportRow.verdict, ReportRow.policy_name,
                   ReportRow.decided_at, ReportRow.requested_revision, ReportRow.requested_by,
                   ReportRow.document[("identity", "endpoint")])
        .order_by(ReportRow.id.desc()).limit(limit)
    )
    lines = []
    for report_id, repo_id, sha, verdict, policy_name, decided_at, requested, by, endpoint in session.execute(query):
        lines.append(VetLine(report_id, repo_id, sha, verdict, policy_name, decided_at, requested, by, not endpoint))
    return lines


def recent_jobs(session: Session, limit: int) -> list[VetJob]:
    """The newest ``limit`` vet jobs, of any status, newest first."""
    query = select(VetRow).order_by(VetRow.created_at.desc(), VetRow.id).limit(limit)
    return [to_job(row) for row in session.execute(query).scalars()]


def commit_order(session: Session, repo_ids: Sequence[str]) -> dict[str, list[str]]:
    """Each repo's vetted commits, the most recently decided first (as a repo page lists them)."""
    newest = func.max(ReportRow.id)
    query = (
        reports_of(RepoRow.repo_id, RevisionRow.sha, newest)
        .where(RepoRow.repo_id.in_(list(repo_ids)))
        .group_by(RepoRow.repo_id, RevisionRow.sha)
        .order_by(RepoRow.repo_id, newest.desc())
    )
    order: dict[str, list[str]] = {}
    for repo_id, sha, _ in session.execute(query):
        order.setdefault(repo_id, []).append(sha)
    return order
