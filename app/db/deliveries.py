"""Webhook deliveries already acted on (a replay of one queues nothing), and the reports that make a vet redundant."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.db.joins import reports_of
from app.db.models import RepoRow, ReportRow, RevisionRow, WebhookDeliveryRow


def known(session: Session, keys: Sequence[str]) -> set[str]:
    """Those of ``keys`` (delivery digests) already remembered."""
    if not keys:
        return set()
    query = select(WebhookDeliveryRow.key_digest).where(WebhookDeliveryRow.key_digest.in_(list(keys)))
    return set(session.execute(query).scalars())


def remember(session: Session, deliveries: Sequence[tuple[str, str, str, str]], at: datetime) -> None:
    """Remember each (key digest, repo, ref, new sha); one remembered already (a concurrent twin) is left as it is."""
    rows = [{"key_digest": key, "repo_id": repo, "ref": ref[:300], "new_sha": sha, "received_at": at}
            for key, repo, ref, sha in dict((d[0], d) for d in deliveries).values()]
    if not rows:
        return
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    session.execute(dialect.insert(WebhookDeliveryRow).values(rows).on_conflict_do_nothing())


def prune(session: Session, *, before: datetime, keep: int) -> None:
    """Forget deliveries received before ``before``, and all but the newest ``keep``: the table stays bounded
    whatever a sender with the secret posts."""
    session.execute(delete(WebhookDeliveryRow).where(WebhookDeliveryRow.received_at < before))
    oldest_kept = (select(WebhookDeliveryRow.received_at).order_by(WebhookDeliveryRow.received_at.desc())
                   .offset(keep).limit(1))
    cutoff = session.execute(oldest_kept).scalar_one_or_none()
    if cutoff is not None:
        session.execute(delete(WebhookDeliveryRow).where(WebhookDeliveryRow.received_at <= cutoff))


def reports_under(session: Session, repo_id: str, sha: str, policy_sha256: str) -> list[tuple[int, object]]:
    """(id, identity endpoint) of each report of ``repo_id`` at ``sha`` recorded under the policy, newest first.

    The endpoint tells a vet from the hub from a local scan (which never stands for the hub's commit)."""
    query = (
        reports_of(ReportRow.id, ReportRow.document[("identity", "endpoint")])
        .where(RepoRow.repo_id == repo_id, RevisionRow.sha == sha, ReportRow.policy_sha256 == policy_sha256)
        .order_by(ReportRow.id.desc())
    )
    return [(int(report_id), endpoint) for report_id, endpoint in session.execute(query)]
