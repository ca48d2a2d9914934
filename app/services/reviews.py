"""Reviewing a vetted commit: a human approves or rejects what the active policy decided.

The use case behind `POST /reviews` and `hfvet review`. The rules of what a review changes and
which review may be given are in app.core.review; this module checks the request, takes the
commit's lock, decides against the newest report and its newest review, and records both the
review and its audit row in one transaction (a refusal writes nothing).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from sqlalchemy.exc import SQLAlchemyError

from app.core.gate import Outcome
from app.core.policy import LoadedPolicy
from app.core.principals import ROLES
from app.core.review import DECISIONS, Review, apply_review, refusal
from app.db import reviews
from app.db.attestations import attest_review
from app.db.session import Store
from app.errors import HfvetError
from app.services.commits import AmbiguousCommit, NotACommit, similar_repos, vetted_commit
from app.services.outcomes import LOCAL_SCAN, is_local_scan, policy_outcome
from app.services.store import StoreError

MAX_REASON = 2000
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class ReviewRefused(HfvetError):
    """The review was not recorded; ``kind`` is a stable code (invalid-review, invalid-revision,
    ambiguous-revision, not-vetted, already-approved, already-rejected, admin-required, role-too-low, local-scan)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class ReviewRequest:
    repo: str
    revision: str  # the commit: its sha, or a prefix of 7+ hex (app.services.commits resolves it)
    decision: str  # approve | reject
    reason: str
    actor: str  # who, for the review row and the audit log
    role: str  # the actor's role: reviewer or admin


@dataclass(frozen=True)
class ReviewResult:
    review: Review
    outcome: Outcome  # the commit's effective outcome with this review
    sha: str  # the 40-hex commit reviewed


def submit_review(store: Store, policy: LoadedPolicy, request: ReviewRequest) -> ReviewResult:
    """Record ``request`` against the newest report of its commit, or raise ReviewRefused."""
    reason = _checked(request)
    request = replace(request, revision=_commit(store, request))
    try:
        with store.session() as session:
            if not reviews.lock_commit(session, request.repo, request.revision):
                raise _not_vetted(request)
            report = reviews.newest_report(session, request.repo, request.revision)
            if report is None:
                raise _not_vetted(request)
            if request.decision == "approve" and is_local_scan(report):
                raise ReviewRefused("local-scan", f"{request.repo}@{request.revision}: {LOCAL_SCAN}")
            decided = policy_outcome(report, policy)
            current = reviews.effective_review(session, request.repo, report)  # a re-vet keeps a reject
            problem = refusal(decided, current, request.decision, request.role)
            if problem is not None:
                raise ReviewRefused(problem.kind, f"{request.repo}@{request.revision}: {problem.message}")
            review = reviews.add_review(session, report, decision=request.decision, reason=reason,
                                        actor=request.actor, role=request.role, verdict=decided.verdict,
                                        policy=(policy.name, policy.sha256))
            attest_review(session, review.id, store.signer)  # signed with the review, or neither is stored
    except SQLAlchemyError as exc:  # rolled back whole: nothing half-written
        raise StoreError(f"cannot record the review: {type(exc).__name__}: {exc}") from exc
    except ReviewRefused as exc:  # a typo'd repo: the did-you-mean, read once the commit's lock is let go
        close = similar_repos(store, request.repo, policy) if exc.kind == "not-vetted" else []
        if close:
            raise ReviewRefused(exc.kind, f"{exc}; did you mean {' or '.join(close)}?") from None
        raise
    return ReviewResult(review, apply_review(decided, review), request.revision)


def _commit(store: Store, request: ReviewRequest) -> str:
    """The full sha of the commit asked for (a short one resolved against the store's vetted commits)."""
    try:
        return vetted_commit(store, request.repo, request.revision)
    except AmbiguousCommit as exc:
        raise ReviewRefused("ambiguous-revision", str(exc)) from exc
    except NotACommit as exc:
        raise ReviewRefused("invalid-revision", str(exc)) from exc


def _checked(request: ReviewRequest) -> str:
    """The stripped reason, once the request is well formed."""
    if request.decision not in DECISIONS:
        raise ReviewRefused("invalid-review", f"decision must be approve or reject, not {request.decision[:20]!r}")
    if request.role not in ROLES or ROLES.index(request.role) < ROLES.index("reviewer"):
        raise ReviewRefused("role-too-low", f"a review needs the reviewer or admin role, not {request.role!r}")
    reason = request.reason.strip()
    if not reason:
        raise ReviewRefused("invalid-review", "a review needs a reason")
    if _CONTROL.search(reason):  # PostgreSQL refuses a NUL in text; no reason needs control characters
        raise ReviewRefused("invalid-review", "the reason has control characters (only tabs and newlines are kept)")
    if len(reason) > MAX_REASON:
        raise ReviewRefused("invalid-review", f"the reason is {len(reason)} characters; at most {MAX_REASON}")
    return reason


def _not_vetted(request: ReviewRequest) -> ReviewRefused:
    return ReviewRefused("not-vetted", f"{request.repo}@{request.revision} was never vetted: run "
                                       f"`hfvet vet {request.repo} --revision {request.revision}` first")
