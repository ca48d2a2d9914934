"""Reports in the store: save a vet's report, read a repo's reports whole or lean, and a commit's manifest.

Repo listings are app.db.repos; the store version and the id-order lock, app.db.version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import Any, overload

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from app.core import manifest_json, report_json
from app.core.manifest_json import ManifestDoc
from app.core.repo_refs import REFERENCE_RULE, RepoReference, parse_reference
from app.core.report import Report
from app.core.review_carry import findings_fingerprint
from app.db.content_index import index_commit
from app.db.joins import reports_of
from app.db.models import AuditRow, RepoRow, ReportRow, RevisionRow
from app.db.version import ids_in_commit_order


@dataclass(frozen=True)
class ReportColumns:
    """The columns every read of a stored report has, whole or lean."""

    id: int
    repo_id: str
    sha: str
    verdict: str
    policy_name: str
    policy_sha256: str | None
    decided_at: datetime


@dataclass(frozen=True)
class StoredReport(ReportColumns):
    """A stored report read whole: its columns and its §6.2 document (``load`` gives the Report)."""

    document: dict[str, Any]
    requested_revision: str | None = None
    requested_by: str = ""

    @property
    def reasons(self) -> tuple[str, ...]:
        """Its policy's reasons as the gate shows them, ``rule: message``."""
        return _reason_lines(self.document.get("reasons"))

    @property
    def endpoint(self) -> str | None:
        """The hub it was vetted from; None for `hfvet scan` of local files."""
        return _endpoint((self.document.get("identity") or {}).get("endpoint"))

    @cached_property
    def references(self) -> tuple[RepoReference, ...]:
        """The repos its `repo-reference` findings name (waived ones too: judged, unused)."""
        found = (parse_reference(str(f.get("path")), f.get("evidence")) for f in self.document.get("findings") or []
                 if isinstance(f, dict) and f.get("rule") == REFERENCE_RULE)
        return tuple(dict.fromkeys(r for r in found if r is not None))

    @property
    def scanners(self) -> dict[str, str]:
        """The scanner versions it was vetted with."""
        return dict(self.document.get("scanners") or {})

    def load(self) -> Report:
        return report_json.load(self.document, f"report {self.id}")


@dataclass(frozen=True)
class LeanReport(ReportColumns):
    """A stored report read lean: only what the gate's outcome reads when it is not re-decided.

    Read only for a report recorded under the policy asked about and naming no other repo (lean_report),
    so it has no document: a consumer that needs the findings must read the report whole.
    """

    reasons: tuple[str, ...]  # as StoredReport.reasons
    endpoint: str | None  # as StoredReport.endpoint
    requested_revision: str | None = None
    requested_by: str = ""
    references: tuple[RepoReference, ...] = ()  # always none: a report naming repos is read whole


MaybeLean = StoredReport | LeanReport  # what a read with ``lean_under`` gives


def save_report(session: Session, report: Report, *, requested_revision: str | None, actor: str) -> int:
    """Store a vet's report for its pinned commit; returns the report id. Needs repo and revision."""
    if not report.repo or not report.revision:
        raise ValueError("only a report for a repo at a pinned commit can be stored")
    ids_in_commit_order(session)
    repo = _repo(session, report)
    revision = _revision(session, repo, report)
    index_commit(session, report.repo, report.revision, report.files)  # once per commit, in this transaction
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


@overload
def reports_for(session: Session, repo_id: str) -> list[StoredReport]: ...
@overload
def reports_for(session: Session, repo_id: str, *, lean_under: str | None) -> list[MaybeLean]: ...
def reports_for(session: Session, repo_id: str, *, lean_under: str | None = None) -> Sequence[MaybeLean]:
    """Every stored report of ``repo_id``, oldest first.

    With ``lean_under`` (a policy sha256), a report recorded under that policy and naming no other repo
    is a LeanReport: only what the gate's outcome reads (reasons, identity.endpoint), as in
    app.db.repos' listing: an uncached gate answer for a repo vetted hundreds of times then decodes no findings.
    """
    if lean_under is None:
        query = (
            reports_of(ReportRow, RevisionRow.sha)
            .where(RepoRow.repo_id == repo_id)
            .order_by(ReportRow.decided_at, ReportRow.id)
        )
        return [whole_report(row, sha, repo_id) for row, sha in session.execute(query)]
    lean = (
        reports_of(*LEAN_COLUMNS, RevisionRow.sha)
        .where(RepoRow.repo_id == repo_id)
        .order_by(ReportRow.decided_at, ReportRow.id)
    )
    found: list[LeanReport | int] = []  # a report id where the whole document is needed
    for *columns, sha in session.execute(lean):
        report = lean_report(columns, sha, repo_id, lean_under)
        found.append(report if report is not None else int(columns[0]))
    wanted = [item for item in found if isinstance(item, int)]
    whole: dict[int, StoredReport] = {}
    if wanted:
        rows = session.execute(reports_of(ReportRow, RevisionRow.sha, with_repo=False).where(ReportRow.id.in_(wanted)))
        whole = {row.id: whole_report(row, sha, repo_id) for row, sha in rows}
    return [whole[item] if isinstance(item, int) else item for item in found]


def commit_report_ids(session: Session, repo_id: str, sha: str) -> list[int]:
    """The ids of every report of ``repo_id`` at ``sha``, oldest first (as reports_for orders them)."""
    query = (
        reports_of(ReportRow.id)
        .where(RepoRow.repo_id == repo_id, RevisionRow.sha == sha)
        .order_by(ReportRow.decided_at, ReportRow.id)
    )
    return list(session.execute(query).scalars())


@overload
def report_by_id(session: Session, report_id: int) -> StoredReport | None: ...
@overload
def report_by_id(session: Session, report_id: int, *, lean_under: str | None) -> MaybeLean | None: ...
def report_by_id(session: Session, report_id: int, *, lean_under: str | None = None) -> MaybeLean | None:
    """One stored report; with ``lean_under``, read lean when it may be (as reports_for reads them)."""
    if lean_under is not None:
        lean = (
            reports_of(*LEAN_COLUMNS, RevisionRow.sha, RepoRow.repo_id)
            .where(ReportRow.id == report_id)
        )
        found = session.execute(lean).one_or_none()
        if found is None:
            return None
        *columns, sha, repo_id = found
        report = lean_report(columns, sha, repo_id, lean_under)
        if report is not None:
            return report
    whole = (
        reports_of(ReportRow, RevisionRow.sha, RepoRow.repo_id)
        .where(ReportRow.id == report_id)
    )
    row = session.execute(whole).one_or_none()
    return None if row is None else whole_report(row[0], row[1], row[2])


# What a lean read takes of a report: its columns and the parts of its document the gate's outcome reads.
LEAN_COLUMNS = (ReportRow.id, ReportRow.verdict, ReportRow.policy_name, ReportRow.policy_sha256,
                 ReportRow.decided_at, ReportRow.requested_revision, ReportRow.requested_by,
                 ReportRow.document["reasons"], ReportRow.document[("identity", "endpoint")],
                 ReportRow.document["references"])


def lean_report(columns: Sequence[Any], sha: str, repo_id: str, policy_sha256: str) -> LeanReport | None:
    """The lean report of one row of LEAN_COLUMNS, or None when it must be read whole (another policy
    re-decides it from its findings; references may turn its verdict)."""
    report_id, verdict, policy_name, policy_sha, decided, requested, by, reasons, endpoint, references = columns
    if policy_sha != policy_sha256 or references:
        return None
    return LeanReport(report_id, repo_id, sha, verdict, policy_name, policy_sha, decided, _reason_lines(reasons),
                      _endpoint(endpoint), requested, by)


def _reason_lines(reasons: Any) -> tuple[str, ...]:
    return tuple(f"{r.get('rule')}: {r.get('message')}" for r in reasons or [])


def _endpoint(endpoint: object) -> str | None:
    return str(endpoint) if endpoint else None


def manifest_of(session: Session, repo_id: str, sha: str) -> ManifestDoc | None:
    """The stored manifest of ``repo_id`` at ``sha`` (app.core.manifest_json's form), None if never vetted."""
    query = (
        select(RevisionRow.manifest)
        .join(RepoRow, RevisionRow.repo_pk == RepoRow.id)
        .where(RepoRow.repo_id == repo_id, RevisionRow.sha == sha)
    )
    return session.execute(query).scalar_one_or_none()


def whole_report(row: ReportRow, sha: str, repo_id: str) -> StoredReport:
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
        row = RevisionRow(repo=repo, sha=sha, manifest=manifest_json.dump(report.files))
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
    return [whole_report(row, sha, repo_id) for row, sha, repo_id in session.execute(query)]
