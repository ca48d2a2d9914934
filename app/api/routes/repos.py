"""GET /repos (paginated, filtered by org, tier and verdict) and GET /repos/{org}/{name} (its history)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Path, Query

from app.api import validation
from app.api.deps import ReaderDep, StateDep
from app.api.errors import ApiError
from app.api.openapi import errors, link
from app.api.schemas import CommitOut, EffectiveOut, RepoDetailOut, RepoItemOut, RepoListOut, ReportEntryOut
from app.core.gate import Outcome
from app.core.ids import ORG_PATTERN
from app.services.listing import (
    MAX_LIMIT,
    Decision,
    Listed,
    RepoQuery,
    Tier,
    Verdict,
    decode_cursor,
    encode_cursor,
    list_repos,
    repo_history,
)

router = APIRouter(tags=["repos"])
_PART = "letters, digits, `_`, `.`, `-`; 1-96, starting and ending with a letter, digit or `_`"
Org = Annotated[str, Path(description=f"The org (or user): {_PART}.",
                          json_schema_extra=validation.documented(ORG_PATTERN))]
Name = Annotated[str, Path(description=f"The repo's name: {_PART}; no `--`, `..` or `.git` ending.",
                           json_schema_extra=validation.documented(ORG_PATTERN))]


_FIRST = "$response.body#/items/0"
_LIST_LINKS = {
    "next": link("get_repos_repos_get", "The next page", cursor="$response.body#/next_cursor"),
    "first": link("get_repo_repos__org___name__get", "The first repo's history", org=f"{_FIRST}/org",
                  name=f"{_FIRST}/name"),
    "gate": link("get_gate_gate_get", "The gate's answer for the first repo", repo=f"{_FIRST}/repo"),
}


@router.get("/repos", response_model=RepoListOut,
            responses={200: {"description": "A page of vetted repos", "links": _LIST_LINKS}, **errors(401, 422)})
def get_repos(
    app: StateDep,
    _who: ReaderDep,
    org: Annotated[str | None, Query(max_length=96, description="Only this org (case-insensitive).",
                                     json_schema_extra=validation.documented(ORG_PATTERN))] = None,
    tier: Annotated[Tier | None, Query(description="Only orgs of this tier under the active policy.")] = None,
    verdict: Annotated[Verdict | None, Query(description="Only repos whose newest verdict is this.")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Repos per page.")] = 50,
    cursor: Annotated[str | None, Query(max_length=400, description="`next_cursor` of the previous page.",
                                        json_schema_extra=validation.documented(validation.CURSOR_PATTERN))] = None,
    offset: Annotated[int, Query(ge=0, le=1_000_000, description="Repos to skip (instead of a cursor).")] = 0,
) -> RepoListOut:
    """Vetted repos in id order, each with its newest verdict as the gate sees it under the active policy."""
    if cursor is not None and offset:
        raise ApiError(422, "invalid-request", "pass either `cursor` or `offset`, not both")
    if org is not None:
        org = validation.org(org)
    try:
        after = None if cursor is None else decode_cursor(cursor)
    except ValueError as exc:
        raise ApiError(422, "invalid-cursor", str(exc)) from exc
    query = RepoQuery(org=org, tier=tier, verdict=verdict, limit=limit, after=after, offset=offset)
    page = list_repos(app.store, app.policy, query)
    next_cursor = None if page.next_after is None else encode_cursor(page.next_after)
    filters = {k: v for k, v in {"org": org, "tier": tier, "verdict": verdict}.items() if v is not None}
    links = {"next": "/repos?" + urlencode({**filters, "limit": limit, "cursor": next_cursor})} if next_cursor else {}
    return RepoListOut(items=[_item(i) for i in page.items], limit=limit, next_cursor=next_cursor, links=links)


@router.get("/repos/{org}/{name}", response_model=RepoDetailOut,
            responses={200: {"description": "The repo's history", "links": {
                "gate": link("get_gate_gate_get", "The gate's answer for the repo", repo="$response.body#/repo"),
                "newest": link("get_gate_gate_get", "The gate's answer for its newest decided commit",
                               repo="$response.body#/repo", revision="$response.body#/revisions/0/revision")}},
                       **errors(401, 404, 422, s404="`repo-not-vetted`: the store has never seen it")})
def get_repo(app: StateDep, _who: ReaderDep, org: Org, name: Name) -> RepoDetailOut:
    """Every stored report of every vetted commit, with the verdict each means under the active policy."""
    repo = validation.repo_id(f"{org}/{name}")
    history = repo_history(app.store, app.policy, repo)
    if history is None:
        raise ApiError(404, "repo-not-vetted", f"{repo} has never been vetted: POST /vet?repo={repo}")
    facts = history.repo
    return RepoDetailOut(
        repo=facts.repo_id, org=facts.org, name=facts.name, tier=history.tier, first_seen=facts.first_seen,
        identity={"_id": facts.hub_id, "author": facts.author, "createdAt": facts.hub_created_at},
        policy={"name": app.policy.name, "sha256": app.policy.sha256},
        revisions=[CommitOut(revision=sha, reports=[_entry(d) for d in decisions])
                   for sha, decisions in history.commits],
        links={"gate": f"/gate?repo={facts.repo_id}"},
    )


def _item(listed: Listed) -> RepoItemOut:
    facts = listed.repo
    return RepoItemOut(
        repo=facts.repo_id, org=facts.org, name=facts.name, tier=listed.tier, first_seen=facts.first_seen,
        revisions=listed.revisions, latest=None if listed.effective is None else _effective(listed.effective),
        links={"self": f"/repos/{facts.repo_id}", "gate": f"/gate?repo={facts.repo_id}"},
    )


def _entry(decision: Decision) -> ReportEntryOut:
    report = decision.report
    return ReportEntryOut(
        id=report.id, verdict=report.verdict, policy={"name": report.policy_name, "sha256": report.policy_sha256},
        decided_at=report.decided_at, requested_revision=report.requested_revision,
        requested_by=report.requested_by, effective=_effective(decision.effective),
    )


def _effective(o: Outcome) -> EffectiveOut:
    return EffectiveOut(revision=o.sha, verdict=o.verdict, approved=o.approved, reasons=list(o.reasons),
                        decided_by=o.decided_by, decided_at=o.decided_at)
