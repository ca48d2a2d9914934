"""Rows of the verdict store. Reports are kept whole as §6.2 JSON, with indexed columns for queries."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.base import Base, UTCDateTime


def utcnow() -> datetime:
    return datetime.now(UTC)


class RepoRow(Base):
    __tablename__ = "repos"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    repo_id: Mapped[str] = mapped_column(String(200), unique=True)  # org/name
    org: Mapped[str] = mapped_column(String(96), index=True)
    name: Mapped[str] = mapped_column(String(96))
    hub_id: Mapped[str | None] = mapped_column(String(64))  # the hub's `_id`, first seen
    author: Mapped[str | None] = mapped_column(String(96))
    hub_created_at: Mapped[str | None] = mapped_column(String(40))
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    revisions: Mapped[list[RevisionRow]] = relationship(back_populates="repo")


class RevisionRow(Base):
    """One commit of one repo and its manifest (path, size, sha256, blob id, format)."""

    __tablename__ = "revisions"
    __table_args__ = (UniqueConstraint("repo_pk", "sha", name="repo_sha"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    repo_pk: Mapped[int] = mapped_column(ForeignKey("repos.id"))
    sha: Mapped[str] = mapped_column(String(40))
    manifest: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    repo: Mapped[RepoRow] = relationship(back_populates="revisions")


class ReportRow(Base):
    """One vet's report, whole (report_json), plus the columns the gate and lists query."""

    __tablename__ = "reports"
    __table_args__ = (Index("ix_reports_revision_decided", "revision_pk", "decided_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    revision_pk: Mapped[int] = mapped_column(ForeignKey("revisions.id"))
    verdict: Mapped[str] = mapped_column(String(8), index=True)
    policy_name: Mapped[str] = mapped_column(String(200))
    policy_sha256: Mapped[str | None] = mapped_column(String(64))
    requested_revision: Mapped[str | None] = mapped_column(String(256))
    requested_by: Mapped[str] = mapped_column(String(200))
    decided_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    document: Mapped[dict[str, Any]] = mapped_column(JSON)
    # app.core.review_carry.findings_fingerprint of the document: whether a reviewer's approval of an
    # earlier report of the commit carries to this one. None: stored before it was kept (compare findings).
    findings_sha256: Mapped[str | None] = mapped_column(String(64))

    revision: Mapped[RevisionRow] = relationship()


class AuditRow(Base):
    """Append-only: who did what, when. Nothing updates or deletes these rows."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(40))
    subject: Mapped[str] = mapped_column(String(300))
    detail: Mapped[str] = mapped_column(Text, default="")


class VetRow(Base):
    """One vet job: queued -> running -> done | failed. Requests for the same work attach to one row."""

    __tablename__ = "vets"
    __table_args__ = (Index("ix_vets_work", "repo_id", "sha", "policy_sha256", "status"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)  # uuid4 hex
    repo_id: Mapped[str] = mapped_column(String(200), index=True)
    requested_revision: Mapped[str] = mapped_column(String(256))
    sha: Mapped[str] = mapped_column(String(40))
    policy_name: Mapped[str] = mapped_column(String(200))
    policy_sha256: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(8), index=True)
    requested_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text)
    report_pk: Mapped[int | None] = mapped_column(ForeignKey("reports.id"))


class ReviewRow(Base):
    """A human decision on a stored report: approve a `review`, reject, or (admin) override a `reject`."""

    __tablename__ = "reviews"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    report_pk: Mapped[int] = mapped_column(ForeignKey("reports.id"), index=True)
    decision: Mapped[str] = mapped_column(String(8))  # approve | reject
    reason: Mapped[str] = mapped_column(Text)
    reviewer: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(16))
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    verdict: Mapped[str | None] = mapped_column(String(8))  # the policy verdict the reviewer saw
    policy_sha256: Mapped[str | None] = mapped_column(String(64))  # ... and the policy it came from


class TokenRow(Base):
    """An API token: only its sha256 is stored; the secret is shown once when created."""

    __tablename__ = "tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())  # None: never (said explicitly)


class WebSessionRow(Base):
    """A dashboard login that is still on: its cookie names it by a random id, stored here as sha256.

    Logout deletes the row and revoking the token deletes its rows, so a copy of the cookie kept from
    before stops working at once, on every replica and after a restart (app.db.web_sessions)."""

    __tablename__ = "web_sessions"

    id_digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    token_digest: Mapped[str] = mapped_column(String(64), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)


class WebhookDeliveryRow(Base):
    """A webhook delivery already acted on, per updated ref: a replay of it queues nothing.

    The Hub sends no delivery id, so a delivery is named by what it says: the sha256 of (webhook id,
    repo, ref, old sha, new sha). Rows older than a retention, or beyond a count, are pruned
    (app.db.deliveries); a replay after that still finds its head vetted, and queues nothing."""

    __tablename__ = "webhook_deliveries"

    key_digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    repo_id: Mapped[str] = mapped_column(String(200))
    ref: Mapped[str] = mapped_column(String(300))
    new_sha: Mapped[str] = mapped_column(String(40))
    received_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)


class HubResolutionRow(Base):
    """Where a referenced repo's branch or tag pointed when a gate asked the hub, shared by every replica.

    Read before the hub is asked and written after (app.db.hub_resolutions); a row older than the
    gate's TTL (HFVET_HUB_RESOLVE_TTL) is not used. ``sha`` is None when the hub could not name a
    commit (``error`` says why): a failure is kept too, for a shorter time, so a failing hub is not
    asked again by every answer."""

    __tablename__ = "hub_resolutions"

    repo_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    revision: Mapped[str] = mapped_column(String(256), primary_key=True)
    sha: Mapped[str | None] = mapped_column(String(40))
    error: Mapped[str | None] = mapped_column(Text)
    resolved_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)


class AttestationRow(Base):
    """A signed statement about a stored report: the verdict itself, or a human review of it.

    Signed once, when the report or review is stored, and kept as signed: a verdict changed in the
    database afterwards no longer matches its envelope, so an offline verifier sees the change
    (docs/provenance.md). ``envelope`` is the DSSE envelope as JSON text, byte for byte as served."""

    __tablename__ = "attestations"
    __table_args__ = (Index("ix_attestations_subject", "repo_id", "sha"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    report_pk: Mapped[int] = mapped_column(ForeignKey("reports.id"), index=True)
    review_pk: Mapped[int | None] = mapped_column(ForeignKey("reviews.id"))
    kind: Mapped[str] = mapped_column(String(16))  # verdict | review
    repo_id: Mapped[str] = mapped_column(String(200))
    sha: Mapped[str] = mapped_column(String(40))
    key_id: Mapped[str] = mapped_column(String(64))  # the signing key's id (sha256 of its public key)
    envelope: Mapped[str] = mapped_column(Text)
    signed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ContentRow(Base):
    """The content index: which vetted repo@commit holds a file with these bytes.

    ``digest`` is ``sha256:<hex>`` for files whose sha256 is known (LFS files, and files hfvet read
    whole) and ``gitblob:<hex>`` otherwise; a file may have one row of each kind."""

    __tablename__ = "content_index"
    __table_args__ = (
        UniqueConstraint("repo_id", "sha", "path", "digest", name="uq_content_index_file"),
        Index("ix_content_index_commit", "repo_id", "sha"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    digest: Mapped[str] = mapped_column(String(80), index=True)
    repo_id: Mapped[str] = mapped_column(String(200))
    sha: Mapped[str] = mapped_column(String(40))
    path: Mapped[str] = mapped_column(String(1024))
    size: Mapped[int] = mapped_column(BigInteger)
