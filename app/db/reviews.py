"""Reviews in the store: the newest review per report, and recording one under a lock on its commit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.core.review import Review, covers
from app.core.review_carry import CommitReport, Item, carry_reviews, review_items
from app.db.joins import reports_of
from app.db.models import AuditRow, RepoRow, ReportRow, ReviewRow, RevisionRow
from app.db.repository import MaybeLean, StoredReport, commit_report_ids, report_by_id
from app.db.version import ids_in_commit_order


def lock_commit(session: Session, repo_id: str, sha: str) -> bool:
    """Serialize reviews of one commit until the transaction ends; False if the commit was never vetted.

    A no-op UPDATE takes the row lock on PostgreSQL and the write lock on SQLite before anything is read,
    so two reviewers never both decide against the same stale state.
    """
    repo_pk = select(RepoRow.id).where(RepoRow.repo_id == repo_id).scalar_subquery()
    result = session.execute(
        update(RevisionRow).where(RevisionRow.repo_pk == repo_pk, RevisionRow.sha == sha)
        .values(id=RevisionRow.id)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def newest_report(session: Session, repo_id: str, sha: str) -> StoredReport | None:
    ids = commit_report_ids(session, repo_id, sha)
    return report_by_id(session, ids[-1]) if ids else None


def newest_of_commit(session: Session, repo_id: str, sha: str, *,
                     lean_under: str | None = None) -> tuple[MaybeLean, Review | None] | None:
    """The newest report of ``repo_id`` at ``sha`` and the review that applies to it (effective_reviews).

    What an exact commit's gate answer reads: one report, however often the commit was re-vetted.
    """
    ids = commit_report_ids(session, repo_id, sha)
    report = report_by_id(session, ids[-1], lean_under=lean_under) if ids else None
    if report is None:
        return None
    return report, _commit_reviews(session, repo_id, sha, ids).get(report.id)


def _commit_reviews(session: Session, repo_id: str, sha: str, ids: list[int]) -> dict[int, Review]:
    """effective_reviews over the reports of one commit (``ids``, oldest first)."""
    query = (
        reports_of(ReviewRow)
        .join(ReviewRow, ReviewRow.report_pk == ReportRow.id)
        .where(RepoRow.repo_id == repo_id, RevisionRow.sha == sha)
        .order_by(ReviewRow.id)
    )
    own = {row.report_pk: _review(row) for row in session.execute(query).scalars()}
    return _carried(session, own, [(report_id, sha) for report_id in ids]) if own else {}


def carried_review(session: Session, report_id: int) -> Review | None:
    """The review hfvet carried to ``report_id`` from an earlier report of its commit, when it applies to this
    report's verdict: a reject, or an approval not withdrawn that covers the verdict. None when its own review
    applies, or none does (what a carried review attestation states, app.db.attestations)."""
    repo_id, sha, verdict = session.execute(
        reports_of(RepoRow.repo_id, RevisionRow.sha, ReportRow.verdict).where(ReportRow.id == report_id)).one()
    review = _commit_reviews(session, repo_id, sha, commit_report_ids(session, repo_id, sha)).get(report_id)
    if review is None or review.report_id == report_id or review.withdrawn:
        return None
    return review if review.decision == "reject" or covers(review, verdict) else None


def withdrawn_approval(session: Session, repo_id: str, sha: str) -> Review | None:
    """The approval of an earlier report that the newest report of the commit withdrew (its ``withdrawn``
    says why), if so."""
    ids = commit_report_ids(session, repo_id, sha)
    review = _commit_reviews(session, repo_id, sha, ids).get(ids[-1]) if ids else None
    return review if review is not None and review.withdrawn else None


def newest_review(session: Session, report_id: int) -> Review | None:
    query = select(ReviewRow).where(ReviewRow.report_pk == report_id).order_by(ReviewRow.id.desc()).limit(1)
    row = session.execute(query).scalar_one_or_none()
    return None if row is None else _review(row)


def newest_reviews(session: Session, repo_id: str) -> dict[int, Review]:
    """Each reviewed report of ``repo_id`` -> its newest review (the effective one)."""
    query = (
        reports_of(ReviewRow)
        .join(ReviewRow, ReviewRow.report_pk == ReportRow.id)
        .where(RepoRow.repo_id == repo_id)
        .order_by(ReviewRow.id)
    )
    return {row.report_pk: _review(row) for row in session.execute(query).scalars()}


def effective_reviews(session: Session, repo_id: str, reports: Sequence[MaybeLean]) -> dict[int, Review]:
    """Each report of ``repo_id`` (oldest first) -> the review that applies to it (app.core.review_carry's rule:
    its own newest review, else a reject of an earlier report of the commit, or an approval while the re-vets
    find nothing new)."""
    own = newest_reviews(session, repo_id)
    return _carried(session, own, [(r.id, r.sha) for r in reports]) if own else {}


def _carried(session: Session, own: dict[int, Review], reports: list[tuple[int, str]],
             fingerprints: dict[int, str | None] | None = None) -> dict[int, Review]:
    """carry_reviews over (report id, commit) pairs, oldest first, reading what the rule asks of the store."""
    if fingerprints is None:
        ids = [report_id for report_id, _ in reports]
        fingerprints = dict(session.execute(
            select(ReportRow.id, ReportRow.findings_sha256).where(ReportRow.id.in_(ids))).all())
    commit_reports = [CommitReport(report_id, sha, fingerprints.get(report_id)) for report_id, sha in reports]
    return carry_reviews(own, commit_reports, _ItemsReader(session))


class _ItemsReader:
    """review_items of stored reports, read once each (only when a carried approval's fingerprints differ)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._read: dict[int, list[Item]] = {}

    def __call__(self, report_id: int) -> list[Item]:
        if report_id not in self._read:
            query = select(ReportRow.document["findings"], ReportRow.document["files"]).where(ReportRow.id == report_id)
            found = self._session.execute(query).one_or_none()
            findings, files = found if found is not None else (None, None)
            self._read[report_id] = review_items({"findings": findings, "files": files})
        return self._read[report_id]


def effective_reviews_of_repos(session: Session, repo_ids: list[str]) -> dict[str, dict[int, Review]]:
    """effective_reviews for many repos in two queries (for listings): repo id -> report id -> review.

    Repos without any review are left out.
    """
    reviewed = (
        reports_of(ReviewRow, RepoRow.repo_id)
        .join(ReviewRow, ReviewRow.report_pk == ReportRow.id)
        .where(RepoRow.repo_id.in_(repo_ids))
        .order_by(ReviewRow.id)
    )
    own: dict[str, dict[int, Review]] = {}
    for row, repo_id in session.execute(reviewed):
        own.setdefault(repo_id, {})[row.report_pk] = _review(row)
    if not own:
        return {}
    order = (
        reports_of(ReportRow.id, RevisionRow.sha, RepoRow.repo_id, ReportRow.findings_sha256)
        .where(RepoRow.repo_id.in_(list(own)))
        .order_by(ReportRow.decided_at, ReportRow.id)
    )
    reports: dict[str, list[tuple[int, str]]] = {}
    fingerprints: dict[int, str | None] = {}
    for report_id, sha, repo_id, fingerprint in session.execute(order):
        reports.setdefault(repo_id, []).append((report_id, sha))
        fingerprints[report_id] = fingerprint
    return {repo_id: _carried(session, reviews, reports.get(repo_id, []), fingerprints)
            for repo_id, reviews in own.items()}


def reviewed_repos(session: Session, repo_ids: list[str]) -> list[str]:
    """Those of ``repo_ids`` with at least one review (one query, for listings)."""
    query = (
        reports_of(RepoRow.repo_id).distinct()
        .join(ReviewRow, ReviewRow.report_pk == ReportRow.id)
        .where(RepoRow.repo_id.in_(repo_ids))
    )
    return list(session.execute(query).scalars())


def effective_review(session: Session, repo_id: str, report: StoredReport) -> Review | None:
    """The review that applies to ``report``: its own newest one, else one carried forward (effective_reviews)."""
    own = newest_review(session, report.id)
    if own is not None:
        return own
    return _commit_reviews(session, repo_id, report.sha, commit_report_ids(session, repo_id, report.sha)).get(report.id)


def add_review(
    session: Session, report: StoredReport, *, decision: str, reason: str, actor: str, role: str,
    verdict: str, policy: tuple[str, str],
) -> Review:
    """Record a review of ``report`` and its audit row (the caller holds the commit's lock)."""
    policy_name, policy_sha = policy
    ids_in_commit_order(session)
    row = ReviewRow(report_pk=report.id, decision=decision, reason=reason, reviewer=actor, role=role,
                    at=datetime.now(UTC), verdict=verdict, policy_sha256=policy_sha)
    session.add(row)
    session.add(AuditRow(actor=actor, action="review", subject=f"{report.repo_id}@{report.sha}",
                         detail=f"{decision} as {role} of report {report.id} ({verdict} under {policy_name}): "
                                f"{reason}"))
    session.flush()
    return _review(row)


def _review(row: ReviewRow) -> Review:
    return Review(row.id, row.report_pk, row.decision, row.reason, row.reviewer, row.role, row.at, row.verdict,
                  row.policy_sha256)
