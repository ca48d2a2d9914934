"""GET /ui/: the approved checkpoints, filtered, searched and paged by keyset."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Depends
from starlette.responses import Response

from app.services.activity import counts
from app.services.gating import pins
from app.services.listing import (
    MAX_LIMIT,
    Listed,
    RepoQuery,
    Tier,
    Verdict,
    decode_cursor,
    encode_cursor,
    list_repos,
)
from app.web import inputs
from app.web.page import Page, PageError, PageRoute, page

router = APIRouter(route_class=PageRoute)
TIERS: tuple[Tier, ...] = ("vendor-official", "trusted", "third-party")
VERDICTS = ("deployable", "approve", "review", "reject", "any")  # deployable: the gate approves it now
LIMITS = (25, 50, 100, 200)  # the form's choices; a link may ask for any page size from 1 to MAX_LIMIT
_TIER: dict[str, Tier] = {t: t for t in TIERS}
_VERDICT: dict[str, Verdict] = {"approve": "approve", "review": "review", "reject": "reject"}


@router.get("/ui/", name="home")
def home(current: Annotated[Page, Depends(page)], org: str = "", tier: str = "", verdict: str = "deployable",
         q: str = "", after: str = "", limit: int = 50) -> Response:
    query = _query(org, tier, verdict, q, after, limit)
    result = list_repos(current.app.store, current.app.policy, query)
    filters = {"org": org.strip(), "tier": query.tier or "", "verdict": verdict, "q": q.strip(), "limit": limit}
    next_url = None
    if result.next_after is not None:
        next_url = "/ui/?" + urlencode({**{k: v for k, v in filters.items() if v}, "after": encode_cursor(
            result.next_after)})
    rows = [_row(item) for item in result.items]
    limits = sorted({*LIMITS, limit})  # the form keeps a size a link asked for
    return current.render("home.html", rows=rows, filters=filters, tiers=TIERS, verdicts=VERDICTS, limits=limits,
                          next_url=next_url, first_page=bool(after), counts=counts(current.app.store))


def _query(org: str, tier: str, verdict: str, q: str, after: str, limit: int) -> RepoQuery:
    if tier and tier not in TIERS:
        raise PageError(422, "Bad filter", f"tier must be one of {', '.join(TIERS)}")
    if verdict not in VERDICTS:
        raise PageError(422, "Bad filter", f"verdict must be one of {', '.join(VERDICTS)}")
    if not 1 <= limit <= MAX_LIMIT:
        raise PageError(422, "Bad page size", f"limit must be from 1 to {MAX_LIMIT} repos a page; {limit} is not.")
    try:
        start = decode_cursor(after) if after else None
    except ValueError as exc:
        raise PageError(422, "Bad page link", "That page link is not one hfvet made; start from the first page.") \
            from exc
    return RepoQuery(org=inputs.org(org), tier=_TIER.get(tier), verdict=_VERDICT.get(verdict), limit=limit,
                     after=start, search=q.strip()[:200] or None, deployable=verdict == "deployable")


def _row(item: Listed) -> dict[str, object]:
    """One table row: the commit the gate answers without a revision (app.services.deployable), else the newest
    vetted one; deploy snippets only for a commit the gate approves now, and a badge when the newest moved on."""
    deployable = item.deployable.outcome
    snippets: dict[str, str] = {}
    if deployable is not None:
        repo, sha = item.repo.repo_id, deployable.sha
        found = pins(repo, sha)
        snippets = {"download": f"hfvet download {repo} --revision {sha} --local-dir ./{item.repo.name}",
                    "vllm": found["vllm"], "sglang": found["sglang"]}
    return {"item": item, "effective": deployable or item.effective, "snippets": snippets,
            "moved": item.deployable}
