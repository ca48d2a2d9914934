"""GET /gate: 200 for an approved revision; 403 refused, 404 not vetted, 409 the branch moved.

A branch or tag the hub does not have is a 404 error (`revision-not-found`), a hub that does not
answer a 503: neither is a gate answer, so neither carries one.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from app.api import metrics, validation
from app.api.deps import ReaderDep, StateDep
from app.api.openapi import errors
from app.api.schemas import ErrorOut, GateOut
from app.core.gate import Approved, Moved, NotVetted
from app.services.gating import GateResult, cached_gate

router = APIRouter(tags=["gate"])


_ANSWERS: dict[int | str, dict[str, Any]] = {
    200: {"model": GateOut, "description": "`approved`: the commit, its files and pins"},
    403: {"model": GateOut, "description": "`denied`: rejected, or waiting for a review; `reasons` say why"},
    404: {"model": GateOut | ErrorOut, "description": "`not-vetted` (a gate answer), or the hub has no such "
          "branch, tag or repo (`revision-not-found`, `repo-not-found`: an error)"},
    409: {"model": GateOut, "description": "`moved`: the branch's head is not vetted; `newest_approved` names "
          "the last approved commit"},
}


@router.get("/gate", response_model=None, responses=_ANSWERS | errors(401, 422, 503))
def get_gate(
    app: StateDep,
    _who: ReaderDep,
    repo: Annotated[str, Query(max_length=200, description=validation.REPO_RULES,
                               json_schema_extra=validation.documented(validation.REPO_PATTERN))],
    revision: Annotated[str | None, Query(
        max_length=256, json_schema_extra=validation.documented(validation.REVISION_PATTERN),
        description=validation.REVISION_RULES + " Without it: the newest approved commit.")] = None,
) -> Any:
    repo = validation.repo_id(repo)
    revision = None if revision is None else validation.revision(revision)
    result = cached_gate(app.gate_cache, repo, revision, store=app.store, policy=app.policy, resolve=app.resolve)
    metrics.gate_answered(result.status)
    return gate_response(result)


def gate_response(result: GateResult) -> Response:
    """The HTTP answer for ``result``: this route's and the fast path's (app.api.fastgate), alike."""
    return Response(result.body, status_code=_status(result.answer), media_type="application/json")


def _status(answer: object) -> int:
    if isinstance(answer, Approved):
        return 200
    if isinstance(answer, NotVetted):
        return 404
    if isinstance(answer, Moved):
        return 409
    return 403
