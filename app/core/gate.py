"""The pure gate rule: (requested revision, resolved head, stored outcomes) -> one answer.

No I/O here: the service resolves branches on the hub, loads stored outcomes and re-decides
them under the active policy; this module only says what those facts mean for a deploy.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.core.ids import is_commit


@dataclass(frozen=True)
class Outcome:
    """The effective, current outcome for one vetted commit of one repo."""

    sha: str
    approved: bool  # policy approve, a reviewer's approval of `review`, or an admin override
    verdict: str  # the policy verdict under the active policy
    reasons: tuple[str, ...]
    decided_at: datetime  # when the vet decided, or the review that settled it
    decided_by: str  # "policy <name>", or the reviewer ("token:<name> (reviewer)")
    vetted_at: datetime | None = None  # when the report was recorded, if a review decided later

    @property
    def recorded(self) -> datetime:
        """When the report was recorded: outcomes are ordered by it, not by when a human looked."""
        return self.vetted_at or self.decided_at


@dataclass(frozen=True)
class Approved:
    outcome: Outcome


@dataclass(frozen=True)
class Denied:
    """Vetted, and not approved (rejected, or waiting for review)."""

    outcome: Outcome


@dataclass(frozen=True)
class NotVetted:
    revision: str | None


@dataclass(frozen=True)
class Moved:
    """The branch head moved past the newest approved commit."""

    head: str
    newest_approved: Outcome


Answer = Approved | Denied | NotVetted | Moved


@dataclass(frozen=True)
class Superseded:
    """The newest vetted commit is not approved while an older one is (a push the vet rejected, or one
    waiting for review): the older commit stays deployable by pin, and every face says the newest moved on.

    The one rule behind the gate's answer without a revision and the listings (app.services.gating.deployable).
    """

    newest: Outcome  # the most recently vetted commit, not approved
    approved: Outcome  # the newest approved commit: what the gate answers without a revision


def decide_gate(requested: str | None, head: str | None, outcomes: list[Outcome]) -> Answer:
    """The gate's answer.

    ``requested`` is what the caller asked for (None: the newest approved revision); ``head``
    is the commit a branch or tag resolves to now (the sha itself for an exact commit).
    """
    approved = newest_approved(outcomes)
    if requested is None:
        return Approved(approved) if approved else _newest_denied_or_missing(outcomes)
    target = requested if is_commit(requested) else head
    for_target = [o for o in outcomes if o.sha == target]
    if for_target:
        current = _current(for_target)[0]  # a review applies to the report it reviewed
        return Approved(current) if current.approved else Denied(current)
    if not is_commit(requested) and head is not None and approved:
        return Moved(head, approved)
    return NotVetted(target)


def newest_approved(outcomes: list[Outcome]) -> Outcome | None:
    """The most recently vetted commit whose current outcome is approved: the gate's answer without a revision."""
    approved = sorted((o for o in _current(outcomes) if o.approved), key=lambda o: o.recorded, reverse=True)
    return approved[0] if approved else None


def superseded(outcomes: list[Outcome]) -> Superseded | None:
    """``Superseded`` when the most recently vetted commit is not approved and an older one is; else None."""
    current = _current(outcomes)
    approved = newest_approved(outcomes)
    if approved is None:
        return None
    newest = max(current, key=lambda o: o.recorded)
    return None if newest.approved or newest.recorded <= approved.recorded else Superseded(newest, approved)


def _current(outcomes: list[Outcome]) -> list[Outcome]:
    """Each commit's newest outcome (on a tie the later one: outcomes come oldest first); an approval that a
    later vet of the same commit overturned is gone."""
    newest: dict[str, Outcome] = {}
    for o in outcomes:
        if o.sha not in newest or o.recorded >= newest[o.sha].recorded:
            newest[o.sha] = o
    return list(newest.values())


def _newest_denied_or_missing(outcomes: list[Outcome]) -> Answer:
    if not outcomes:
        return NotVetted(None)
    return Denied(max(outcomes, key=lambda o: o.recorded))
