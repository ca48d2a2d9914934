"""GET /ui/reviews: commits waiting for a human, oldest first; POST: a reviewer's decision (CSRF-checked)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form
from starlette.responses import Response

from app.services.review_queue import recent_decisions, review_queue
from app.services.reviews import ReviewRefused, ReviewRequest, submit_review
from app.web import inputs
from app.web.page import Page, PageRoute, page

router = APIRouter(route_class=PageRoute)
_STATUS = {"not-vetted": 404, "admin-required": 403, "role-too-low": 403, "already-approved": 409,
           "already-rejected": 409, "local-scan": 409, "invalid-review": 422}


@router.get("/ui/reviews", name="reviews")
def queue_page(current: Annotated[Page, Depends(page)]) -> Response:
    return _queue(current)


@router.post("/ui/reviews", name="review")
def post_review(current: Annotated[Page, Depends(page)], csrf: Annotated[str, Form()] = "",
                repo: Annotated[str, Form()] = "", revision: Annotated[str, Form()] = "",
                decision: Annotated[str, Form()] = "", reason: Annotated[str, Form()] = "") -> Response:
    current.check_csrf(csrf)  # first: a forged post changes nothing and learns nothing
    who = current.require("reviewer")
    request = ReviewRequest(inputs.repo_id(repo), revision.strip(), decision, reason, who.actor, who.role)
    try:
        result = submit_review(current.app.store, current.app.policy, request)
    except ReviewRefused as exc:
        return _queue(current, status=_STATUS.get(exc.kind, 422), error=str(exc),
                      draft={"repo": repo, "revision": revision, "reason": reason})
    state = "approved" if result.outcome.approved else "not approved"
    return current.redirect("/ui/reviews", flash=f"{decision.capitalize()}d {request.repo}@{request.revision[:12]}: "
                                                 f"the gate now says {state}.")


def _queue(current: Page, status: int = 200, error: str | None = None,
           draft: dict[str, str] | None = None) -> Response:
    return current.render("reviews.html", status=status, queue=review_queue(current.app.store, current.app.policy),
                          decisions=recent_decisions(current.app.store), error=error, draft=draft or {},
                          can_review=current.may("reviewer"))
