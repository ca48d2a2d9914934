"""POST /reviews: a reviewer approves or rejects a vetted commit; overriding a reject needs an admin."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

from app.api import validation
from app.api.bodies import json_body, openapi_body
from app.api.deps import ReviewerDep, StateDep
from app.api.errors import ApiError
from app.api.openapi import errors, link
from app.api.review_schemas import ReviewIn, ReviewOut
from app.services.reviews import ReviewRefused, ReviewRequest, submit_review

router = APIRouter(tags=["reviews"])

_STATUS = {"not-vetted": 404, "admin-required": 403, "role-too-low": 403, "already-approved": 409,
           "already-rejected": 409, "local-scan": 409}
ReviewBody = Annotated[ReviewIn, json_body(ReviewIn, after=ReviewerDep)]  # read once the reviewer is known


@router.post("/reviews", response_model=ReviewOut, status_code=201, openapi_extra=openapi_body(ReviewIn),
             responses={201: {"description": "The review, and whether the commit is approved now", "links": {
                 "gate": link("get_gate_gate_get", "The gate's answer for the commit reviewed",
                              repo="$response.body#/repo", revision="$response.body#/revision")}},
                 **errors(401, 403, 404, 409, 422, s403="`role-too-low`, `admin-required`",
                              s404="`not-vetted`: no report of that commit",
                              s409="`already-approved`, `already-rejected`, `local-scan`",
                              s422="`invalid-repo`, `invalid-review`, `invalid-revision` (not a commit sha), "
                                   "`ambiguous-revision`")})
def post_review(app: StateDep, who: ReviewerDep, body: ReviewBody) -> ReviewOut:
    """Approve or reject the commit's current verdict under the active policy (as the gate computes it).

    A reviewer may approve a `review` and reject anything not already rejected; approving a `reject`
    needs an admin. The review applies to the commit's newest report; the newest review wins.
    """
    validation.repo_id(body.repo)
    request = ReviewRequest(body.repo, body.revision, body.decision, body.reason, who.actor, who.role)
    try:
        result = submit_review(app.store, app.policy, request)
    except ReviewRefused as exc:
        raise ApiError(_STATUS.get(exc.kind, 422), exc.kind, str(exc)) from exc
    return ReviewOut.of(body, result, {"name": app.policy.name, "sha256": app.policy.sha256})
