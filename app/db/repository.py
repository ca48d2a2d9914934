"""Reading and writing the store: save a vet's report, list what was decided for a repo."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core import report_json
from app.core.report import Report
from app.db.models import AuditRow, RepoRow, ReportRow, RevisionRow


@dataclass(frozen=True)
class StoredReport:
    id: int
    repo_id: str
    sha: str
    verdict: str
    policy_name: str
    policy_sha256: str | None
    decided_at: datetime
    document: dict[str, Any]


def save_report(session: Session, report: Report, *, requested_revision: str | None, actor: str) -> int:
    """Store a vet's report for its pinned commit; returns the report id. Needs repo and revision."""
    if not report.repo or not report.revision:
        raise ValueError("only a report for a repo at a pinned commit can be stored")
    repo = _repo(session, report)
    revision = _revision(session, repo, report)
    row = ReportRow(
        revision=revision,
        verdict=report.verdict.value,
        policy_name=report.decision.policy.name,
        policy_sha256=report.decision.policy.sha256,
        requested_revision=requested_revision,
        requested_by=actor,
        decided_at=datetime.now(UTC),
        document=report_json.dump(report),
    )
    session.add(row)
    session.add(AuditRow(actor=actor, action="vet", subject=f"{report.repo}@{report.revision}",
                         detail=f"{report.verdict.value} under {report.decision.policy.name}"))
    session.flush()
    return row.id


def reports_for(session: Session, repo_id: str) -> list[StoredReport]:
    """Every stored report of ``repo_id``, oldest first."""
    query = (
        select(ReportRow, RevisionRow.sha)
        .join(RevisionRow, ReportRow.revision_pk == RevisionRow.id)
        .join(RepoRow, RevisionRow.repo_pk == RepoRow.id)
        .where(RepoRow.repo_id == repo_id)
        .order_by(ReportRow.decided_at, ReportRow.id)
    )
    return [_stored(row, sha, repo_id) for row, sha in session.execute(query)]


def manifest_of(session: Session, repo_id: str, sha: str) -> list[dict[str, Any]] | None:
    query = (
        select(RevisionRow.manifest)
        .join(RepoRow, RevisionRow.repo_pk == RepoRow.id)
        .where(RepoRow.repo_id == repo_id, RevisionRow.sha == sha)
    )
    return session.execute(query).scalar_one_or_none()


def _stored(row: ReportRow, sha: str, repo_id: str) -> StoredReport:
    decided = row.decided_at if row.decided_at.tzinfo else row.decided_at.replace(tzinfo=UTC)  # SQLite drops tz
    return StoredReport(row.id, repo_id, sha, row.verdict, row.policy_name, row.policy_sha256, decided,
                        row.document)


def _repo(session: Session, report: Report) -> RepoRow:
    repo_id = report.repo or ""
    row = session.execute(select(RepoRow).where(RepoRow.repo_id == repo_id)).scalar_one_or_none()
    if row is None:
        org, _, name = repo_id.partition("/")
        facts = report.identity
        row = RepoRow(repo_id=repo_id, org=org, name=name, hub_id=_text(facts.get("_id")),
                      author=_text(facts.get("author")), hub_created_at=_text(facts.get("createdAt")))
        session.add(row)
        session.flush()
    return row


def _revision(session: Session, repo: RepoRow, report: Report) -> RevisionRow:
    sha = report.revision or ""
    query = select(RevisionRow).where(RevisionRow.repo_pk == repo.id, RevisionRow.sha == sha)
    row = session.execute(query).scalar_one_or_none()
    if row is None:
        manifest = [{"path": f.path, "size": f.size, "sha256": f.sha256, "blob_id": f.blob_id, "format": f.format}
                    for f in report.files]
        row = RevisionRow(repo=repo, sha=sha, manifest=manifest)
        session.add(row)
        session.flush()
    return row


def _text(value: object) -> str | None:
    return None if value is None else str(value)[:96]


def report_document(session: Session, report_id: int) -> dict[str, Any] | None:
    row = session.get(ReportRow, report_id)
    return None if row is None else row.document


def newest_reports(session: Session) -> list[StoredReport]:
    """The newest report of every stored commit of every repo (what `policy diff --stored` replays)."""
    newest = (
        select(ReportRow.revision_pk, func.max(ReportRow.id).label("report_id"))
        .group_by(ReportRow.revision_pk).subquery()
    )
    query = (
        select(ReportRow, RevisionRow.sha, RepoRow.repo_id)
        .join(newest, ReportRow.id == newest.c.report_id)
        .join(RevisionRow, ReportRow.revision_pk == RevisionRow.id)
        .join(RepoRow, RevisionRow.repo_pk == RepoRow.id)
        .order_by(RepoRow.repo_id, ReportRow.decided_at)
    )
    return [_stored(row, sha, repo_id) for row, sha, repo_id in session.execute(query)]


@dataclass(frozen=True)
class KnownIdentity:
    facts: dict[str, str | None]  # the hub identity first seen: _id, author, createdAt
    approved_before: bool  # some stored report of the repo was approved by its policy


def known_identity(session: Session, repo_id: str) -> KnownIdentity | None:
    row = session.execute(select(RepoRow).where(RepoRow.repo_id == repo_id)).scalar_one_or_none()
    if row is None:
        return None
    approved = session.execute(
        select(func.count()).select_from(ReportRow)
        .join(RevisionRow, ReportRow.revision_pk == RevisionRow.id)
        .where(RevisionRow.repo_pk == row.id, ReportRow.verdict == "approve")
    ).scalar_one()
    facts = {"_id": row.hub_id, "author": row.author, "createdAt": row.hub_created_at}
    return KnownIdentity(facts, approved > 0)
