"""Listing what the store knows: repos with their newest effective verdict, and one repo's history.

Verdicts are shown as the gate would see them: under the active policy, re-decided from the
stored findings when a report was recorded under another policy. Tiers come from the active
policy's tiers, so changing the policy changes the listing without touching the store.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Literal

from sqlalchemy.orm import Session

from app.core.gate import Outcome
from app.core.policy import LoadedPolicy
from app.core.policy.identity import tier_of
from app.core.review import Review
from app.db.repos import OrgFilter, RepoFacts, RepoSummary, repo_facts, repo_page
from app.db.repository import MaybeLean, StoredReport, reports_for
from app.db.reviews import effective_reviews, effective_reviews_of_repos
from app.db.session import Store
from app.services.deployable import Deployable, deployable, deployable_of
from app.services.outcomes import outcome
from app.services.references import StoreJudge, store_only_judge

Tier = Literal["vendor-official", "trusted", "third-party"]
Verdict = Literal["approve", "review", "reject"]
_REPO_ID = re.compile(r"[A-Za-z0-9._-]+/[A-Za-z0-9._-]+")  # the hub's repo id characters
_BATCH = 200  # repos read per query while a verdict filter skips non-matching ones
MAX_LIMIT = 200  # repos one page lists at most (GET /repos and the dashboard's home page)


@dataclass(frozen=True)
class RepoQuery:
    org: str | None = None
    tier: Tier | None = None
    verdict: Verdict | None = None
    limit: int = 50
    after: str | None = None  # the repo id a cursor names: list the ones after it
    offset: int = 0
    search: str | None = None  # only repos whose id contains this text (case-insensitive)
    deployable: bool = False  # only repos with a commit the gate approves now (its answer without a revision)


@dataclass(frozen=True)
class Listed:
    repo: RepoFacts
    tier: Tier
    revisions: int
    newest: MaybeLean | None  # lean when recorded under the active policy (app.db.repository.LeanReport)
    effective: Outcome | None  # the newest report's outcome under the active policy
    deployable: Deployable  # the commit the gate answers without a revision, and whether the newest moved on


@dataclass(frozen=True)
class RepoPage:
    items: list[Listed]
    next_after: str | None  # where the next page starts, or None on the last page


@dataclass(frozen=True)
class Decision:
    """One stored report of one commit: as recorded, and as the active policy sees it now."""

    report: StoredReport
    effective: Outcome


@dataclass(frozen=True)
class RepoHistory:
    repo: RepoFacts
    tier: Tier
    commits: list[tuple[str, list[Decision]]]  # newest decided commit first, its reports newest first
    deployable: Deployable = field(default_factory=Deployable)  # what the gate answers without a revision


def list_repos(store: Store, policy: LoadedPolicy, query: RepoQuery) -> RepoPage:
    """One page of repos; ``next_after`` is set only when another matching repo exists."""
    matching = _matching(_candidates(store, policy, query), query)
    filtered = query.verdict is not None or query.deployable
    skip = query.offset if filtered else 0  # without a verdict filter the store applied the offset
    found = list(islice(matching, skip, skip + query.limit + 1))
    page = found[: query.limit]
    more = len(found) > query.limit
    return RepoPage(page, page[-1].repo.repo_id if more else None)


def _candidates(store: Store, policy: LoadedPolicy, query: RepoQuery) -> Iterator[Listed]:
    """Repos in id order matching org and tier (filtered in SQL), read in batches."""
    orgs = _org_filter(policy, query)
    after = query.after
    filtered = query.verdict is not None or query.deployable
    offset = 0 if filtered else query.offset  # with a verdict filter the offset counts matches
    # The first read fits the page (twice over when a verdict filter skips some), later ones grow to _BATCH:
    # every repo read costs its newest report's JSON, so a 50-row page should not read 200.
    size = min(_BATCH, (query.limit + 1) * (2 if filtered else 1))
    judge = store_only_judge(store, policy)
    while True:
        with store.session() as session:
            batch = repo_page(session, orgs, after=after, offset=offset, limit=size, contains=query.search,
                              lean_under=policy.sha256)
            reviews = _reviews_of_newest(session, batch)
        yield from (_listed(store, summary, policy, reviews.get(summary.repo.repo_id), judge) for summary in batch)
        if len(batch) < size:
            return
        after, offset, size = batch[-1].repo.repo_id, 0, _BATCH


def _matching(items: Iterator[Listed], query: RepoQuery) -> Iterator[Listed]:
    if query.deployable:
        items = (i for i in items if i.deployable.outcome is not None)
    if query.verdict is None:
        return items
    return (i for i in items if i.effective is not None and i.effective.verdict == query.verdict)


def _org_filter(policy: LoadedPolicy, query: RepoQuery) -> OrgFilter:
    tiers = policy.model.tiers
    if query.tier == "vendor-official":
        return OrgFilter(query.org, among=tiers.vendor_official)
    if query.tier == "trusted":
        return OrgFilter(query.org, among=tiers.trusted)
    if query.tier == "third-party":
        return OrgFilter(query.org, not_among=[*tiers.vendor_official, *tiers.trusted])
    return OrgFilter(query.org)


def _reviews_of_newest(session: Session, batch: list[RepoSummary]) -> dict[str, Review]:
    """Repo id -> the review that applies to its newest report, for the repos of ``batch`` with reviews."""
    newest = {s.repo.repo_id: s.newest.id for s in batch if s.newest is not None}
    found: dict[str, Review] = {}
    for repo_id, reviews in effective_reviews_of_repos(session, list(newest)).items():
        review = reviews.get(newest[repo_id])
        if review is not None:
            found[repo_id] = review
    return found


def _listed(store: Store, summary: RepoSummary, policy: LoadedPolicy, review: Review | None,
            judge: StoreJudge) -> Listed:
    newest = summary.newest
    effective = None if newest is None else outcome(newest, policy, review, judge.of((newest.repo_id, newest.sha)))
    if effective is None or effective.approved or summary.revisions < 2:  # no older commit could be deployable
        found = Deployable(effective if effective is not None and effective.approved else None, None)
    else:  # the newest moved on from an approved commit? Read the repo's other reports (the gate's rule)
        found = deployable_of(store, summary.repo.repo_id, policy, judge)
    return Listed(summary.repo, tier_of(summary.repo.org, policy.model.tiers), summary.revisions, newest, effective,
                  found)


def repo_history(store: Store, policy: LoadedPolicy, repo_id: str) -> RepoHistory | None:
    """Every stored report of ``repo_id`` grouped by commit, or None for a repo never vetted."""
    with store.session() as session:
        facts = repo_facts(session, repo_id)
        reports = reports_for(session, repo_id) if facts else []
        reviews = effective_reviews(session, repo_id, reports) if reports else {}
    if facts is None:
        return None
    by_commit: dict[str, list[Decision]] = {}
    judge = store_only_judge(store, policy)
    for report in sorted(reports, key=_newest_first):  # each as the gate sees it: with its review
        effective = outcome(report, policy, reviews.get(report.id), judge.of((repo_id, report.sha)))
        by_commit.setdefault(report.sha, []).append(Decision(report, effective))
    found = deployable(reports, [d.effective for decisions in by_commit.values() for d in decisions])
    return RepoHistory(facts, tier_of(facts.org, policy.model.tiers), list(by_commit.items()), found)


def _newest_first(report: StoredReport) -> tuple[float, int]:
    return (-report.decided_at.timestamp(), -report.id)


def encode_cursor(repo_id: str) -> str:
    return base64.urlsafe_b64encode(repo_id.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The repo id a cursor names; ValueError for anything this service did not hand out."""
    try:
        repo_id = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"not a cursor from GET /repos: {cursor[:60]!r}") from exc
    if not _REPO_ID.fullmatch(repo_id) or encode_cursor(repo_id) != cursor:  # a NUL would be a 5xx on PostgreSQL
        raise ValueError(f"not a cursor from GET /repos: {cursor[:60]!r}")
    return repo_id

