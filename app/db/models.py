"""Rows of the verdict store. Reports are kept whole as §6.2 JSON, with indexed columns for queries."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.base import Base


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
    first_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    revisions: Mapped[list[RevisionRow]] = relationship(back_populates="repo")


class RevisionRow(Base):
    """One commit of one repo and its manifest (path, size, sha256, blob id, format)."""

    __tablename__ = "revisions"
    __table_args__ = (UniqueConstraint("repo_pk", "sha", name="repo_sha"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    repo_pk: Mapped[int] = mapped_column(ForeignKey("repos.id"))
    sha: Mapped[str] = mapped_column(String(40))
    manifest: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    first_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

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
    decided_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    document: Mapped[dict[str, Any]] = mapped_column(JSON)

    revision: Mapped[RevisionRow] = relationship()


class AuditRow(Base):
    """Append-only: who did what, when. Nothing updates or deletes these rows."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(40))
    subject: Mapped[str] = mapped_column(String(300))
    detail: Mapped[str] = mapped_column(Text, default="")
