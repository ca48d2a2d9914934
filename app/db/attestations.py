"""Attestations in the store: a verdict or review signed in the transaction that stores it, kept as signed.

The envelope is stored as text, byte for byte as it is served: a verdict changed in the database later
does not change its attestation, so a verifier sees the disagreement (docs/provenance.md).

A review carried to a re-vet of its commit (app.core.review_carry) is signed again for the re-vet's verdict
statement when that verdict is signed, saying it was carried and from which review; its row's ``review_pk``
is the human review's id, its ``report_pk`` the re-vet's report.
"""

from __future__ import annotations

import base64
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from app import __version__
from app.core.provenance.envelope import SigningKey, sign
from app.core.provenance.statement import (
    Carried,
    ReviewFacts,
    canonical,
    digest_of,
    review_statement,
    verdict_statement,
)
from app.db.joins import reports_of
from app.db.models import AttestationRow, RepoRow, ReportRow, ReviewRow, RevisionRow
from app.db.reviews import carried_review

log = logging.getLogger(__name__)
KINDS = ("verdict", "review")


@dataclass(frozen=True)
class StoredAttestation:
    id: int
    kind: str  # verdict | review
    repo_id: str
    sha: str
    report_id: int
    review_id: int | None
    key_id: str
    envelope: str  # the DSSE envelope's JSON text, as signed
    signed_at: datetime


def attest_report(session: Session, report_id: int, signer: SigningKey | None, *,
                  carry: bool = True) -> StoredAttestation | None:
    """Sign the stored report ``report_id`` (None: no key, or the key expired, so nothing is signed); with
    ``carry``, also the review carried to it from an earlier report of the commit (attest_carried)."""
    signer = _usable(signer)
    if signer is None:
        return None
    row, sha, repo_id = session.execute(
        reports_of(ReportRow, RevisionRow.sha, RepoRow.repo_id).where(ReportRow.id == report_id)).one()
    statement = verdict_statement(row.document, decided_at=row.decided_at, hfvet_version=__version__,
                                  key=signer.validity)
    made = _add(session, AttestationRow(report_pk=row.id, kind="verdict", repo_id=repo_id, sha=sha,
                                        key_id=signer.key_id, envelope=sign(statement, signer)))
    if carry:
        attest_carried(session, report_id, signer)
    return made


def attest_review(session: Session, review_id: int, signer: SigningKey | None) -> StoredAttestation | None:
    """Sign the stored review ``review_id``, naming its report's newest verdict attestation by digest."""
    signer = _usable(signer)
    if signer is None:
        return None
    review = session.get(ReviewRow, review_id)
    if review is None:
        raise ValueError(f"no review {review_id}")
    return _sign_review(session, review, review.report_pk, None, signer)


def attest_carried(session: Session, report_id: int, signer: SigningKey | None) -> StoredAttestation | None:
    """Sign the review carried to ``report_id`` (app.db.reviews.carried_review) for its verdict statement, unless
    none applies, its verdict is unsigned, or it is signed already. A withdrawn approval carries nothing."""
    signer = _usable(signer)
    review = None if signer is None else carried_review(session, report_id)
    if signer is None or review is None or _review_rows(session, review.id, report_id) is not None:
        return None
    original = _review_rows(session, review.id, review.report_id)
    row = session.get(ReviewRow, review.id)
    if row is None or _verdict_of(session, report_id) is None:
        return None
    carried = Carried(review.id, None if original is None else payload_sha256(original.envelope))
    return _sign_review(session, row, report_id, carried, signer)


def _sign_review(session: Session, review: ReviewRow, report_id: int, carried: Carried | None,
                 signer: SigningKey) -> StoredAttestation:
    """Sign ``review`` as applying to ``report_id`` (its own report, or one it was ``carried`` to)."""
    report, sha, repo_id = session.execute(
        reports_of(ReportRow, RevisionRow.sha, RepoRow.repo_id).where(ReportRow.id == report_id)).one()
    verdict = _verdict_of(session, report.id)
    facts = ReviewFacts(review.decision, review.reason, review.reviewer, review.role, review.at, review.verdict,
                        review.policy_sha256)
    statement = review_statement(repo_id, sha, report.document.get("files") or [], facts,
                                 verdict_statement_sha256=None if verdict is None else payload_sha256(verdict.envelope),
                                 key=signer.validity, carried=carried)
    return _add(session, AttestationRow(report_pk=report.id, review_pk=review.id, kind="review", repo_id=repo_id,
                                        sha=sha, key_id=signer.key_id, envelope=sign(statement, signer)))


def _verdict_of(session: Session, report_id: int) -> StoredAttestation | None:
    return _newest(session, select(AttestationRow).where(AttestationRow.report_pk == report_id,
                                                           AttestationRow.kind == "verdict"))


def _review_rows(session: Session, review_id: int, report_id: int) -> StoredAttestation | None:
    """The newest attestation of review ``review_id`` as applying to ``report_id``."""
    return _newest(session, select(AttestationRow).where(AttestationRow.kind == "review",
                                                           AttestationRow.review_pk == review_id,
                                                           AttestationRow.report_pk == report_id))


def payload_sha256(envelope: str) -> str:
    """The sha256 of an envelope's signed payload: the name a review statement gives the verdict's."""
    return digest_of(base64.b64decode(json.loads(envelope)["payload"]))


def statement_bytes(session: Session, report_id: int, signer: SigningKey) -> bytes:
    """The verdict statement of a stored report as ``signer`` would sign it (byte-stable)."""
    row = session.get(ReportRow, report_id)
    if row is None:
        raise ValueError(f"no report {report_id}")
    return canonical(verdict_statement(row.document, decided_at=row.decided_at, hfvet_version=__version__,
                                       key=signer.validity))


def newest(session: Session, repo_id: str, sha: str, kind: str = "verdict") -> StoredAttestation | None:
    """The newest attestation of ``kind`` for the commit (of its newest attested report)."""
    query = select(AttestationRow).where(AttestationRow.repo_id == repo_id, AttestationRow.sha == sha,
                                         AttestationRow.kind == kind)
    return _newest(session, query)


def of_commit(session: Session, repo_id: str, sha: str) -> list[StoredAttestation]:
    """Every attestation of the commit, oldest first."""
    query = (select(AttestationRow).where(AttestationRow.repo_id == repo_id, AttestationRow.sha == sha)
             .order_by(AttestationRow.id))
    return [_stored(row) for row in session.execute(query).scalars()]


def newest_verdicts(session: Session, repo_id: str) -> dict[str, StoredAttestation]:
    """Each attested commit of ``repo_id`` -> its newest verdict attestation (for the repo page)."""
    query = (select(AttestationRow).where(AttestationRow.repo_id == repo_id, AttestationRow.kind == "verdict")
             .order_by(AttestationRow.id))
    return {row.sha: _stored(row) for row in session.execute(query).scalars()}


def reviewed_commits(session: Session, repo_id: str) -> set[str]:
    """The commits of ``repo_id`` with a review attestation (for the repo page)."""
    query = select(AttestationRow.sha).where(AttestationRow.repo_id == repo_id, AttestationRow.kind == "review")
    return set(session.execute(query.distinct()).scalars())


def unattested_reports(session: Session, repo_id: str, sha: str | None = None) -> list[int]:
    """The ids of ``repo_id``'s stored reports (at ``sha``, when given) with no verdict attestation, oldest first."""
    signed = select(AttestationRow.report_pk).where(AttestationRow.kind == "verdict")
    query = reports_of(ReportRow.id).where(RepoRow.repo_id == repo_id, ReportRow.id.not_in(signed))
    if sha is not None:
        query = query.where(RevisionRow.sha == sha)
    return list(session.execute(query.order_by(ReportRow.decided_at, ReportRow.id)).scalars())


def unattested_reviews(session: Session, repo_id: str, sha: str | None = None) -> list[int]:
    """The ids of ``repo_id``'s stored reviews (at ``sha``, when given) with no review attestation, oldest first."""
    signed = select(AttestationRow.id).where(  # on its own report: a carried one is another report's
        AttestationRow.kind == "review", AttestationRow.review_pk == ReviewRow.id,
        AttestationRow.report_pk == ReviewRow.report_pk)
    query = (reports_of(ReviewRow.id).join(ReviewRow, ReviewRow.report_pk == ReportRow.id)
             .where(RepoRow.repo_id == repo_id, ~signed.exists()))
    if sha is not None:
        query = query.where(RevisionRow.sha == sha)
    return list(session.execute(query.order_by(ReviewRow.at, ReviewRow.id)).scalars())


def newest_reports(session: Session, repo_id: str, sha: str | None = None) -> list[int]:
    """The newest report of each commit of ``repo_id`` (of ``sha`` only, when given): what the gate answers from."""
    query = reports_of(ReportRow.id, RevisionRow.sha).where(RepoRow.repo_id == repo_id)
    if sha is not None:
        query = query.where(RevisionRow.sha == sha)
    newest: dict[str, int] = {}
    for report_id, commit in session.execute(query.order_by(ReportRow.decided_at, ReportRow.id)):
        newest[commit] = report_id
    return list(newest.values())


def _usable(signer: SigningKey | None) -> SigningKey | None:
    """``signer``, unless there is none or it expired (then nothing is signed, and the log says why)."""
    if signer is not None and signer.expired_on(datetime.now(UTC).date()):
        log.warning("attestation key %s expired on %s: nothing is signed (create and configure a new key)",
                    signer.key_id[:16], signer.expires)
        return None
    return signer


def _add(session: Session, row: AttestationRow) -> StoredAttestation:
    row.signed_at = datetime.now(UTC)
    session.add(row)
    session.flush()
    return _stored(row)


def _newest(session: Session, query: Select[Any]) -> StoredAttestation | None:
    row = session.execute(query.order_by(AttestationRow.id.desc()).limit(1)).scalar_one_or_none()
    return None if row is None else _stored(row)


def _stored(row: AttestationRow) -> StoredAttestation:
    return StoredAttestation(row.id, row.kind, row.repo_id, row.sha, row.report_pk, row.review_pk, row.key_id,
                             row.envelope, row.signed_at)
