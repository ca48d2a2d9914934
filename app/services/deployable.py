"""What a repo may deploy now, and whether its newest vet moved on: one meaning for every face.

The gate without a revision answers the newest approved commit (app.core.gate.newest_approved). When a later
commit was vetted and is rejected or waiting for review (app.core.gate.superseded), that answer stands (the
older commit is deployable by pin) and carries a warning: `hfvet gate` prints it on stderr, GET /gate lists it
in `warnings`, and the dashboard keeps the repo listed with its deployable commit and a badge. Used by
app.services.gating (the gate) and app.services.listing (GET /repos and the dashboard).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.gate import Outcome, Superseded, newest_approved, superseded
from app.core.ids import is_commit
from app.core.policy import LoadedPolicy
from app.db.repository import MaybeLean, reports_for
from app.db.reviews import effective_reviews
from app.db.session import Store
from app.services.outcomes import outcome
from app.services.references import StoreJudge


@dataclass(frozen=True)
class Deployable:
    """What a repo may deploy now, as the gate answers without a revision, and whether its newest vet moved on.

    The one meaning the gate (``gate(repo, None)``), GET /gate and the dashboard's listings share.
    """

    outcome: Outcome | None = None  # the newest approved commit, or None: nothing to deploy
    moved: Superseded | None = None  # the newest vetted commit is not approved, while ``outcome`` is
    vetted_as: str | None = None  # the branch or tag the newest vet asked for (None: the default branch)

    @property
    def warnings(self) -> tuple[str, ...]:
        return () if self.moved is None else (moved_warning(self.moved, self.vetted_as),)

    @property
    def moved_state(self) -> str:
        """``rejected`` or ``waiting for review``: what the newest vetted commit is."""
        return "" if self.moved is None else _state(self.moved.newest)

    @property
    def badge(self) -> str:
        """The dashboard's short label, e.g. ``main moved to a rejected commit`` (the warning is its title)."""
        if self.moved is None:
            return ""
        branch = "branch" if is_commit(self.vetted_as) else self.vetted_as or "default branch"
        what = "rejected commit" if self.moved_state == "rejected" else "commit waiting for review"
        return f"{branch} moved to a {what}"


def deployable(reports: Sequence[MaybeLean], outcomes: Sequence[Outcome]) -> Deployable:
    """``reports``' deployable commit; ``outcomes`` are theirs under the active policy (any order, any pairing)."""
    moved = superseded(list(outcomes))
    if moved is None:
        return Deployable(newest_approved(list(outcomes)), None)
    of_newest = [r for r in reports if r.sha == moved.newest.sha]
    vetted_as = max(of_newest, key=lambda r: (r.decided_at, r.id)).requested_revision if of_newest else None
    return Deployable(moved.approved, moved, vetted_as)


def moved_warning(moved: Superseded, vetted_as: str | None) -> str:
    """The warning each face shows (`hfvet gate` on stderr, GET /gate's `warnings`, the dashboard's badge title)."""
    newest, approved = moved.newest.sha, moved.approved.sha
    if is_commit(vetted_as):
        head = f"the newest vetted commit {newest} is {_state(moved.newest)}"
    else:
        head = f"{vetted_as or 'the default branch'} moved to {newest}, which is {_state(moved.newest)}"
    return f"{head}; the older approved commit {approved} stays deployable by pin"


def _state(newest: Outcome) -> str:
    waiting = newest.verdict == "review" and newest.decided_by.startswith("policy")  # no reviewer decided yet
    return "waiting for review" if waiting else "rejected"


def deployable_of(store: Store, repo: str, policy: LoadedPolicy, judge: StoreJudge) -> Deployable:
    """``deployable`` over every stored report of ``repo``, each as the gate sees it (with its review); the
    references judged by ``judge`` (the listings': the store alone)."""
    with store.session() as session:
        stored = reports_for(session, repo, lean_under=policy.sha256)
        reviews = effective_reviews(session, repo, stored) if stored else {}
    return deployable(stored, [outcome(r, policy, reviews.get(r.id), judge.of((repo, r.sha))) for r in stored])
