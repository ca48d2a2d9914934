"""Acting on a Hub webhook: each new head is vetted once, however often a delivery is sent.

The Hub retries a delivery it thinks failed, and anyone holding the secret can replay one; the Hub
sends no delivery id. So each updated ref of a delivery is named by (webhook id, repo, ref, old sha,
new sha) and remembered once acted on: a replay queues nothing. A head already vetted under the
active policy (by a vet from the hub) is not vetted again either, whichever delivery announces it,
and one already queued or running is joined (app.jobs). Remembered deliveries are pruned by age and
by count, so the table stays bounded.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy.exc import SQLAlchemyError

from app.db import deliveries
from app.db.session import Store

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from app.core.jobs import VetJob
    from app.jobs.interface import JobQueue

log = logging.getLogger(__name__)
REPLAYED = "replayed delivery"
RETENTION = timedelta(days=7)  # the Hub retries within minutes; a replay after this still finds its head vetted
MAX_REMEMBERED = 10_000


@dataclass(frozen=True)
class Delivery:
    """One updated ref of one webhook delivery."""

    webhook_id: str
    repo: str
    ref: str  # as the Hub sent it: refs/heads/main
    revision: str  # the branch or tag: main
    old_sha: str | None
    new_sha: str

    @property
    def key(self) -> str:
        named = [self.webhook_id, self.repo, self.ref, self.old_sha or "", self.new_sha]
        return hashlib.sha256(json.dumps(named, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class Received:
    queued: list[VetJob]
    ignored: list[dict[str, str]]  # {"ref", "reason"}


def receive(store: Store, jobs: JobQueue, policy_sha256: str, wanted: Sequence[Delivery], *,
            requested_by: str) -> Received:
    """Queue a vet of each delivery's head unless it is a replay or its head is vetted already."""
    with store.session() as session:
        seen = deliveries.known(session, [d.key for d in wanted])
        ignored = [{"ref": d.ref, "reason": _redundant(session, d, seen, policy_sha256)} for d in wanted]
    fresh = [d for d, why in zip(wanted, ignored, strict=True) if not why["reason"]]
    queued = jobs.submit_all([(d.repo, d.revision, d.new_sha) for d in fresh],
                             requested_by=requested_by) if fresh else []
    _remember(store, [d for d in wanted if d.key not in seen])  # only once queued: a refused delivery is retried
    return Received(queued, [why for why in ignored if why["reason"]])


def _redundant(session: Session, delivery: Delivery, seen: set[str], policy_sha256: str) -> str:
    """Why ``delivery`` needs no vet, or "" when it does."""
    if delivery.key in seen:
        return REPLAYED
    from_hub = [report_id for report_id, endpoint in
                deliveries.reports_under(session, delivery.repo, delivery.new_sha, policy_sha256)
                if endpoint]  # a local scan never stands for the hub's commit
    if from_hub:
        return f"{delivery.new_sha} already vetted under the active policy (report {from_hub[0]})"
    return ""


def _remember(store: Store, acted_on: Sequence[Delivery]) -> None:
    if not acted_on:
        return
    now = datetime.now(UTC)
    try:
        with store.session() as session:
            deliveries.remember(session, [(d.key, d.repo, d.ref, d.new_sha) for d in acted_on], now)
            deliveries.prune(session, before=now - RETENTION, keep=MAX_REMEMBERED)
    except SQLAlchemyError as exc:  # the vets are queued; a replay would only join or find them
        log.warning("webhook deliveries not remembered (%s: %s); a replay of them may queue again",
                    type(exc).__name__, exc)
