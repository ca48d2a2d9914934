"""GET /gate: 200 for an approved revision; 403 refused, 404 not vetted, 409 the branch moved."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from app.api import metrics, validation
from app.api.deps import ReaderDep, StateDep
from app.core.gate import Approved, Moved, NotVetted
from app.services.gating import GateResult, cached_gate

router = APIRouter(tags=["gate"])


@router.get("/gate", responses={403: {}, 404: {}, 409: {}})
def get_gate(
    app: StateDep,
    _who: ReaderDep,
    repo: Annotated[str, Query(max_length=200)],
    revision: Annotated[str | None, Query(max_length=256)] = None,
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
