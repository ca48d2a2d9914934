"""GET /ui/vets: the newest vets, from the server's jobs (running, queued, failed, done) and the store's reports."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.responses import Response

from app.services.activity import MAX_RECENT, recent_jobs, recent_vets
from app.web.page import Page, PageError, PageRoute, page

router = APIRouter(route_class=PageRoute)
JOBS_SHOWN = 20  # the newest jobs: enough to see what runs now and what failed lately


@router.get("/ui/vets", name="vets")
def vets_page(current: Annotated[Page, Depends(page)], limit: int = 50) -> Response:
    if not 1 <= limit <= MAX_RECENT:
        raise PageError(422, "Bad page size", f"limit must be from 1 to {MAX_RECENT} vets; {limit} is not.")
    store = current.app.store
    return current.render("vets.html", jobs=recent_jobs(store, JOBS_SHOWN), vets=recent_vets(store, limit),
                          limit=limit)
