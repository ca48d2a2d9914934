"""GET /ui/pulls: who pulled which commit through the Hub endpoint (`/hub`), newest first."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.responses import Response

from app.services.pulls import MAX_PULLS, recent_pulls
from app.web.page import Page, PageError, PageRoute, page

router = APIRouter(route_class=PageRoute)


@router.get("/ui/pulls", name="pulls")
def pulls_page(current: Annotated[Page, Depends(page)], limit: int = 50) -> Response:
    if not 1 <= limit <= MAX_PULLS:
        raise PageError(422, "Bad page size", f"limit must be from 1 to {MAX_PULLS} pulls; {limit} is not.")
    return current.render("pulls.html", pulls=recent_pulls(current.app.store, limit), limit=limit)
