"""GET /gate: 200 for an approved revision; 403 refused, 404 not vetted, 409 the branch moved.

A branch or tag the hub does not have is a 404 error (`revision-not-found`), a hub that does not
answer a 503: neither is a gate answer, so neither carries one.

An answer that judges referenced repos at their branches resolves them on the hub (through the
shared, short-lived cache: app.services.hub_resolutions), at most HFVET_GATE_HUB_BUDGET per answer,
and stops resolving when the client leaves or the server is stopping.
"""

from __future__ import annotations

import asyncio
import threading
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from app.api import metrics, validation
from app.api.deps import ReaderDep, StateDep
from app.api.openapi import errors
from app.api.schemas import ErrorOut, GateOut
from app.core.gate import Approved, Moved, NotVetted
from app.core.ids import REPO_PATTERN, REVISION_PATTERN
from app.services.gating import GateResult

router = APIRouter(tags=["gate"])
DISCONNECT_POLL = 0.25  # seconds between checks that the client is still there, while an answer is computed


_ANSWERS: dict[int | str, dict[str, Any]] = {
    200: {"model": GateOut, "description": "`approved`: the commit, its files and pins"},
    403: {"model": GateOut, "description": "`denied`: rejected, or waiting for a review; `reasons` say why"},
    404: {"model": GateOut | ErrorOut, "description": "`not-vetted` (a gate answer; for a repo the store does not "
          "know, `reasons` may end with a did-you-mean), or the hub has no such branch, tag or repo "
          "(`revision-not-found`, `repo-not-found`: an error)"},
    409: {"model": GateOut, "description": "`moved`: the branch's head is not vetted; `newest_approved` names "
          "the last approved commit"},
}


@router.get("/gate", response_model=None, responses=_ANSWERS | errors(
    401, 422, 503, s422="`invalid-repo`, `invalid-revision`; `ambiguous-revision` (with `candidates`)"))
async def get_gate(
    request: Request,
    app: StateDep,
    _who: ReaderDep,
    repo: Annotated[str, Query(max_length=200, description=validation.REPO_RULES,
                               json_schema_extra=validation.documented(REPO_PATTERN))],
    revision: Annotated[str | None, Query(
        max_length=256, json_schema_extra=validation.documented(REVISION_PATTERN),
        description=validation.REVISION_RULES + " A commit may be given by its first 7 or more hex digits "
                    "(`ambiguous-revision` when several vetted commits start with them). Without it: the newest "
                    "approved commit.")] = None,
) -> Any:
    repo = validation.repo_id(repo)
    revision = None if revision is None else validation.revision(revision)
    left = threading.Event()
    work = partial(app.gate, repo, revision, left)
    result = await unless_abandoned(request, work, left)
    metrics.gate_answered(result.status)
    return gate_response(result)


async def unless_abandoned(request: Request, work: partial[GateResult], left: threading.Event) -> GateResult:
    """``work()`` on a worker thread, with ``left`` set once the client disconnects (or this request is
    cancelled, as uvicorn does past its graceful-shutdown timeout): the judge then stops resolving.

    Cancelling the request's task alone would not stop the thread; the event does, at its next resolution.
    """
    task = asyncio.ensure_future(run_in_threadpool(work))
    try:
        while not task.done():
            done, _ = await asyncio.wait({task}, timeout=DISCONNECT_POLL)
            if not done and await request.is_disconnected():
                left.set()
        return task.result()
    finally:
        left.set()


def gate_response(result: GateResult) -> Response:
    """The HTTP answer for ``result``: this route's and the fast path's (app.api.routes.gate_fast), alike."""
    return Response(result.body, status_code=_status(result.answer), media_type="application/json")


def _status(answer: object) -> int:
    if isinstance(answer, Approved):
        return 200
    if isinstance(answer, NotVetted):
        return 404
    if isinstance(answer, Moved):
        return 409
    return 403
