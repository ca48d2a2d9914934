"""GET /gate's hot case without FastAPI: an exact commit, asked without a token, already answered.

Deploy scripts ask the gate about the same pinned commits again and again. Once the route has
answered one (and cached it: app.services.gating.GateCache), this pure-ASGI layer sends that answer
itself while the store is unchanged: the same status, headers and bytes as the route
(``gate_response``), counted in the same metric. Everything else goes on to FastAPI untouched: a
request with a token to check, any request under HFVET_READ_AUTH, a branch, a cache miss, a store
that changed or does not answer, and anything the route would refuse (invalid input is never in
the cache, since only the route fills it, after validating).
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api import metrics
from app.api.deps import AppState
from app.api.routes.gate import gate_response
from app.core.gate import is_commit
from app.services.gating import GateResult, cache_key


class GateFastPath:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"] == "/gate":
            result = await _cached_answer(scope)
            if result is not None:
                metrics.gate_answered(result.status)
                await gate_response(result)(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _cached_answer(scope: Scope) -> GateResult | None:
    """The cached answer the route would give now, or None when the route has to decide."""
    state: AppState | None = getattr(scope["app"].state, "hfvet", None)  # Starlette set scope["app"]
    if state is None or state.settings.read_auth or scope.get("root_path") or _has_authorization(scope):
        return None  # who is calling matters (a sent token must be valid): the route checks
    # Parsed as Starlette parses it for the route: the last of repeated parameters counts.
    params = dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))
    repo, revision = params.get("repo"), params.get("revision")
    if repo is None or revision is None or not is_commit(revision):
        return None
    try:
        version = state.version() if state.version.inline else await run_in_threadpool(state.version)
    except Exception:  # noqa: BLE001 - any driver's error: the route asks again and reports it its own way
        return None
    return state.gate_cache.get(cache_key(repo, revision, state.policy), version)


def _has_authorization(scope: Scope) -> bool:
    return any(name == b"authorization" for name, _ in scope["headers"])
