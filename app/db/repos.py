"""Repos in the store: listing and paging with each repo's newest report, its facts, and its known identity."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, Subquery, func, select
from sqlalchemy.orm import Session

from app.db.joins import reports_of
from app.db.models import RepoRow, ReportRow, ReviewRow, RevisionRow
from app.db.repository import LEAN_COLUMNS, MaybeLean, lean_report, whole_report


@dataclass(frozen=True)
class KnownIdentity:
    facts: dict[str, str | None]  # the hub identity first seen: _id, author, createdAt
    approved_before: bool  # some stored report of the repo was approved by its policy or by a review


def known_identity(session: Session, repo_id: str) -> KnownIdentity | None:
    row = session.execute(select(RepoRow).where(RepoRow.repo_id == repo_id)).scalar_one_or_none()
    if row is None:
        return None
    of_repo = reports_of(func.count(), with_repo=False).where(RevisionRow.repo_pk == row.id)
    by_policy = session.execute(of_repo.where(ReportRow.verdict == "approve")).scalar_one()
    by_review = session.execute(  # a human's approval (of a `review`, or an admin override) counts too
        of_repo.join(ReviewRow, ReviewRow.report_pk == ReportRow.id).where(ReviewRow.decision == "approve")
    ).scalar_one()
    facts = {"_id": row.hub_id, "author": row.author, "createdAt": row.hub_created_at}
    return KnownIdentity(facts, by_policy + by_review > 0)


@dataclass(frozen=True)
class RepoFacts:
    """A stored repo: its id, and the identity facts first seen on the hub."""

    repo_id: str
    org: str
    name: str
    hub_id: str | None
    author: str | None
    hub_created_at: str | None
    first_seen: datetime


@dataclass(frozen=True)
class RepoSummary:
    repo: RepoFacts
    revisions: int  # commits with at least one stored report
    newest: MaybeLean | None  # the most recently decided report of any commit (lean with ``lean_under``)


@dataclass(frozen=True)
class OrgFilter:
    """Which orgs a listing keeps, compared case-folded (hub org names are case-insensitive)."""

    equals: str | None = None
    among: Collection[str] | None = None  # None: any org
    not_among: Collection[str] = ()


def repo_page(session: Session, orgs: OrgFilter, *, after: str | None, offset: int, limit: int,
              contains: str | None = None, lean_under: str | None = None) -> list[RepoSummary]:
    """Up to ``limit`` repos ordered by id, after the repo id ``after`` (a cursor) and ``offset`` more;
    with ``contains``, only repos whose id holds that text (case-insensitive, taken literally).
    ``lean_under``: see _newest_reports."""
    query = _repos_where(select(RepoRow), orgs).order_by(RepoRow.repo_id).offset(offset).limit(limit)
    if contains:
        query = query.where(func.lower(RepoRow.repo_id).contains(contains.lower(), autoescape=True))
    if after is not None:
        query = query.where(RepoRow.repo_id > after)
    repos = list(session.execute(query).scalars())
    pks = [r.id for r in repos]
    counts = dict(session.execute(
        select(RevisionRow.repo_pk, func.count()).where(RevisionRow.repo_pk.in_(pks)).group_by(RevisionRow.repo_pk)
    ).all())
    newest = _newest_reports(session, pks, lean_under)
    return [RepoSummary(_facts(r), counts.get(r.id, 0), newest.get(r.id)) for r in repos]


def repo_facts(session: Session, repo_id: str) -> RepoFacts | None:
    row = session.execute(select(RepoRow).where(RepoRow.repo_id == repo_id)).scalar_one_or_none()
    return None if row is None else _facts(row)


def _repos_where(query: Select[RepoRow], orgs: OrgFilter) -> Select[RepoRow]:
    org = func.lower(RepoRow.org)
    if orgs.equals is not None:
        query = query.where(org == orgs.equals.lower())
    if orgs.among is not None:
        query = query.where(org.in_([o.lower() for o in orgs.among]))
    if orgs.not_among:
        query = query.where(org.not_in([o.lower() for o in orgs.not_among]))
    return query


def _newest_reports(session: Session, repo_pks: list[int], lean_under: str | None = None) -> dict[int, MaybeLean]:
    """The newest report of each repo, in one query (a window over each repo's reports).

    With ``lean_under`` (a policy sha256), a report recorded under that policy is a LeanReport: only the
    parts of its document the gate's outcome reads (reasons, identity.endpoint): a listing decodes those,
    not every finding. Reports of other policies come whole, to be re-decided, and so do reports that
    reference other repos (their verdict may turn on whether those are approved now).
    """
    if lean_under is not None:
        return _newest_lean(session, repo_pks, lean_under)
    ranked = _ranked(repo_pks)
    query = (
        select(ReportRow, ranked.c.repo_pk, ranked.c.sha, RepoRow.repo_id)
        .join(ranked, ranked.c.report_pk == ReportRow.id)
        .join(RepoRow, RepoRow.id == ranked.c.repo_pk)
        .where(ranked.c.rank == 1)
    )
    return {pk: whole_report(row, sha, repo_id) for row, pk, sha, repo_id in session.execute(query)}


def _newest_lean(session: Session, repo_pks: list[int], policy_sha256: str) -> dict[int, MaybeLean]:
    ranked = _ranked(repo_pks)
    query = (
        select(*LEAN_COLUMNS, ranked.c.repo_pk, ranked.c.sha, RepoRow.repo_id)
        .join(ranked, ranked.c.report_pk == ReportRow.id)
        .join(RepoRow, RepoRow.id == ranked.c.repo_pk)
        .where(ranked.c.rank == 1)
    )
    found: dict[int, MaybeLean] = {}
    whole: list[int] = []
    for *columns, repo_pk, sha, repo_id in session.execute(query):
        report = lean_report(columns, sha, repo_id, policy_sha256)
        if report is None:
            whole.append(repo_pk)
        else:
            found[repo_pk] = report
    if whole:
        found |= _newest_reports(session, whole)
    return found


def _ranked(repo_pks: list[int]) -> Subquery:
    rank = func.row_number().over(partition_by=RevisionRow.repo_pk,
                                  order_by=(ReportRow.decided_at.desc(), ReportRow.id.desc()))
    return (
        reports_of(ReportRow.id.label("report_pk"), RevisionRow.repo_pk, RevisionRow.sha, rank.label("rank"),
                   with_repo=False)
        .where(RevisionRow.repo_pk.in_(repo_pks))
        .subquery()
    )


def _facts(row: RepoRow) -> RepoFacts:
    return RepoFacts(row.repo_id, row.org, row.name, row.hub_id, row.author, row.hub_created_at, row.first_seen)
