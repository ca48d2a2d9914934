"""Reading and writing the store: save a vet's report, list what was decided for a repo."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Integer, Select, Subquery, bindparam, func, or_, select, text, union
from sqlalchemy.orm import Session

from app.core import report_json
from app.core.report import Report
from app.core.review_carry import findings_fingerprint
from app.db.joins import reports_of
from app.db.models import AuditRow, RepoRow, ReportRow, ReviewRow, RevisionRow


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
    requested_revision: str | None = None
    requested_by: str = ""


def save_report(session: Session, report: Report, *, requested_revision: str | None, actor: str) -> int:
    """Store a vet's report for its pinned commit; returns the report id. Needs repo and revision."""
    if not report.repo or not report.revision:
        raise ValueError("only a report for a repo at a pinned commit can be stored")
    ids_in_commit_order(session)
    repo = _repo(session, report)
    revision = _revision(session, repo, report)
    document = report_json.dump(report)
    row = ReportRow(
        revision=revision,
        verdict=report.verdict.value,
        policy_name=report.decision.policy.name,
        policy_sha256=report.decision.policy.sha256,
        requested_revision=requested_revision,
        requested_by=actor,
        decided_at=datetime.now(UTC),
        document=document,
        findings_sha256=findings_fingerprint(document),
    )
    session.add(row)
    session.add(AuditRow(actor=actor, action="vet", subject=f"{report.repo}@{report.revision}",
                         detail=f"{report.verdict.value} under {report.decision.policy.name}"))
    session.flush()
    return row.id


def reports_for(session: Session, repo_id: str, *, lean_under: str | None = None) -> list[StoredReport]:
    """Every stored report of ``repo_id``, oldest first.

    With ``lean_under`` (a policy sha256), a report recorded under that policy and naming no other repo
    carries only what the gate's outcome reads (reasons, identity.endpoint), as in _newest_reports: an
    uncached gate answer for a repo vetted hundreds of times then decodes no findings.
    """
    if lean_under is None:
        query = (
            reports_of(ReportRow, RevisionRow.sha)
            .where(RepoRow.repo_id == repo_id)
            .order_by(ReportRow.decided_at, ReportRow.id)
        )
        return [_stored(row, sha, repo_id) for row, sha in session.execute(query)]
    lean = (
        reports_of(*_LEAN_COLUMNS, RevisionRow.sha)
        .where(RepoRow.repo_id == repo_id)
        .order_by(ReportRow.decided_at, ReportRow.id)
    )
    found: list[StoredReport | int] = []  # a report id where the whole document is needed
    for *columns, sha in session.execute(lean):
        report = _lean_stored(columns, sha, repo_id, lean_under)
        found.append(report if report is not None else int(columns[0]))
    wanted = [item for item in found if isinstance(item, int)]
    whole: dict[int, StoredReport] = {}
    if wanted:
        rows = session.execute(reports_of(ReportRow, RevisionRow.sha, with_repo=False).where(ReportRow.id.in_(wanted)))
        whole = {row.id: _stored(row, sha, repo_id) for row, sha in rows}
    return [whole[item] if isinstance(item, int) else item for item in found]


def commit_report_ids(session: Session, repo_id: str, sha: str) -> list[int]:
    """The ids of every report of ``repo_id`` at ``sha``, oldest first (as reports_for orders them)."""
    query = (
        reports_of(ReportRow.id)
        .where(RepoRow.repo_id == repo_id, RevisionRow.sha == sha)
        .order_by(ReportRow.decided_at, ReportRow.id)
    )
    return list(session.execute(query).scalars())


def report_by_id(session: Session, report_id: int, *, lean_under: str | None = None) -> StoredReport | None:
    """One stored report; with ``lean_under``, read lean when it may be (as reports_for reads them)."""
    if lean_under is not None:
        lean = (
            reports_of(*_LEAN_COLUMNS, RevisionRow.sha, RepoRow.repo_id)
            .where(ReportRow.id == report_id)
        )
        found = session.execute(lean).one_or_none()
        if found is None:
            return None
        *columns, sha, repo_id = found
        report = _lean_stored(columns, sha, repo_id, lean_under)
        if report is not None:
            return report
    whole = (
        reports_of(ReportRow, RevisionRow.sha, RepoRow.repo_id)
        .where(ReportRow.id == report_id)
    )
    row = session.execute(whole).one_or_none()
    return None if row is None else _stored(row[0], row[1], row[2])


# What a lean read takes of a report: its columns and the parts of its document the gate's outcome reads.
_LEAN_COLUMNS = (ReportRow.id, ReportRow.verdict, ReportRow.policy_name, ReportRow.policy_sha256,
                 ReportRow.decided_at, ReportRow.requested_revision, ReportRow.requested_by,
                 ReportRow.document["reasons"], ReportRow.document[("identity", "endpoint")],
                 ReportRow.document["references"])


def _lean_stored(columns: Sequence[Any], sha: str, repo_id: str, policy_sha256: str) -> StoredReport | None:
    """The lean report of one row of _LEAN_COLUMNS, or None when it must be read whole (another policy
    re-decides it from its findings; references may turn its verdict)."""
    report_id, verdict, policy_name, policy_sha, decided, requested, by, reasons, endpoint, references = columns
    if policy_sha != policy_sha256 or references:
        return None
    document = {"reasons": reasons or [], "identity": {"endpoint": endpoint}}
    return StoredReport(report_id, repo_id, sha, verdict, policy_name, policy_sha, decided, document, requested, by)


def manifest_of(session: Session, repo_id: str, sha: str) -> list[dict[str, Any]] | None:
    query = (
        select(RevisionRow.manifest)
        .join(RepoRow, RevisionRow.repo_pk == RepoRow.id)
        .where(RepoRow.repo_id == repo_id, RevisionRow.sha == sha)
    )
    return session.execute(query).scalar_one_or_none()


def _stored(row: ReportRow, sha: str, repo_id: str) -> StoredReport:
    return StoredReport(row.id, repo_id, sha, row.verdict, row.policy_name, row.policy_sha256, row.decided_at,
                        row.document, row.requested_revision, row.requested_by)


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


def newest_reports(session: Session, *, review_under: str | None = None) -> list[StoredReport]:
    """The newest report of every stored commit of every repo (what `policy diff --stored` replays).

    With ``review_under`` (a policy sha256), only those that may mean `review` under that policy:
    recorded as `review` under it, or recorded under another policy (re-decided by the caller).
    """
    newest = (
        select(ReportRow.revision_pk, func.max(ReportRow.id).label("report_id"))
        .group_by(ReportRow.revision_pk).subquery()
    )
    query = (
        reports_of(ReportRow, RevisionRow.sha, RepoRow.repo_id)
        .join(newest, ReportRow.id == newest.c.report_id)
        .order_by(RepoRow.repo_id, ReportRow.decided_at)
    )
    if review_under is not None:
        query = query.where(or_(ReportRow.verdict == "review", ReportRow.policy_sha256.is_(None),
                                ReportRow.policy_sha256 != review_under))
    return [_stored(row, sha, repo_id) for row, sha, repo_id in session.execute(query)]


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
    newest: StoredReport | None  # the most recently decided report of any commit


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


def _newest_reports(session: Session, repo_pks: list[int], lean_under: str | None = None) -> dict[int, StoredReport]:
    """The newest report of each repo, in one query (a window over each repo's reports).

    With ``lean_under`` (a policy sha256), a report recorded under that policy carries only the parts
    of its document the gate's outcome reads (reasons, identity.endpoint): a listing decodes those,
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
    return {pk: _stored(row, sha, repo_id) for row, pk, sha, repo_id in session.execute(query)}


def _newest_lean(session: Session, repo_pks: list[int], policy_sha256: str) -> dict[int, StoredReport]:
    ranked = _ranked(repo_pks)
    query = (
        select(*_LEAN_COLUMNS, ranked.c.repo_pk, ranked.c.sha, RepoRow.repo_id)
        .join(ranked, ranked.c.report_pk == ReportRow.id)
        .join(RepoRow, RepoRow.id == ranked.c.repo_pk)
        .where(ranked.c.rank == 1)
    )
    found: dict[int, StoredReport] = {}
    whole: list[int] = []
    for *columns, repo_pk, sha, repo_id in session.execute(query):
        report = _lean_stored(columns, sha, repo_id, policy_sha256)
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


# Built once: compiled and cached by SQLAlchemy, so asking costs one round trip and no ORM work.
VERSION_QUERY = select(select(func.max(ReportRow.id)).scalar_subquery(),
                       select(func.max(ReviewRow.id)).scalar_subquery())
_ID_ORDER_LOCK = 0x68667665  # "hfve": one advisory lock for every writer of reports and reviews


def store_version(conn: Connection) -> tuple[int, int]:
    """Moves whenever a report or a review is committed (both tables are append-only): a cache key.

    Max ids are only a version if ids are handed out in commit order: see ``ids_in_commit_order``.
    """
    reports, reviews = conn.execute(VERSION_QUERY).one()
    return (reports or 0, reviews or 0)


# Built once, with the version as parameters: the gate asks it after every vet. Built per call it cost
# ~0.5 ms of CPU (statement and cache key); app.db.version runs it compiled on its own connection (~15 us).
_REPORTS_AFTER = bindparam("reports_after", type_=Integer())
_REVIEWS_AFTER = bindparam("reviews_after", type_=Integer())
WRITTEN_SINCE_QUERY = union(
    reports_of(RepoRow.repo_id)
    .where(ReportRow.id > _REPORTS_AFTER),
    reports_of(RepoRow.repo_id)
    .join(ReviewRow, ReviewRow.report_pk == ReportRow.id)
    .where(ReviewRow.id > _REVIEWS_AFTER),
)


def repos_written_since(conn: Connection, version: tuple[int, int]) -> set[str]:
    """The repos with a report, or a review of one of their reports, committed after ``version``
    (store_version's pair: both tables are append-only and their ids come in commit order)."""
    return set(conn.execute(WRITTEN_SINCE_QUERY, {"reports_after": version[0], "reviews_after": version[1]}).scalars())


def ids_in_commit_order(session: Session) -> None:
    """Hold the id-order lock until this transaction ends; call before adding a report or a review.

    PostgreSQL hands out ids at insert and shows rows at commit: without this, a write that took its
    id first and commits last leaves max(id) unchanged, and the gate cache serves what it revoked.
    (SQLite has one writer at a time already.) A count would do too, but costs a scan per request.
    """
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ID_ORDER_LOCK})
