"""``create_app(root)``: the fixture hub as an ASGI app (Starlette, served by uvicorn)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote, unquote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.hubfixture import errors, routes
from app.hubfixture.context import Call
from app.hubfixture.meta import FixtureConfigError
from app.hubfixture.repo import RepoStore
from app.hubfixture.resolve import resolve_file

DEFAULT_PAGE_SIZE = 1000


def create_app(
    root: Path, *, tokens: Iterable[str] = (), page_size: int = DEFAULT_PAGE_SIZE, latency_ms: float = 0
) -> Starlette:
    """Serve the repos under ``root``; ``tokens`` are accepted by every gated/private repo.

    ``latency_ms`` holds every request back that long before it is answered, as a remote hub's
    round trip would (benchmarks of workers against a hub that is the bottleneck)."""
    if not root.is_dir():
        raise FileNotFoundError(f"fixture hub root is not a directory: {root}")
    if page_size < 1:
        raise ValueError("page_size must be positive")
    if latency_ms < 0:
        raise ValueError("latency_ms must not be negative")
    store = RepoStore(root)
    accepted = frozenset(tokens)

    async def endpoint(request: Request) -> Response:
        if latency_ms:
            await asyncio.sleep(latency_ms / 1000)  # on the event loop: waiting requests cost no thread
        body = await request.body() if request.method == "POST" else b""
        raw_path = _raw_path(request)
        call = Call(
            method=request.method,
            segments=[unquote(s) for s in raw_path.split("/")[1:]],
            raw_path=raw_path,
            query=request.query_params,
            headers=request.headers,
            body=body,
            url=request.url,
            store=store,
            tokens=accepted,
            page_size=page_size,
        )
        # Handlers walk and hash files: keep that off the event loop.
        return await run_in_threadpool(handle, call)

    return Starlette(routes=[Route("/{rest:path}", endpoint, methods=["GET", "HEAD", "POST"])])


def handle(call: Call) -> Response:
    try:
        if call.segments[:1] == ["api"]:
            return routes.api(call)
        if len(call.segments) >= 3 and call.segments[2] == "resolve":
            return resolve_file(call)
        raise errors.not_found()
    except errors.HubHTTPError as exc:
        return exc.response()
    except FixtureConfigError as exc:
        return JSONResponse({"error": f"fixture misconfigured: {exc}"}, status_code=500)


def _raw_path(request: Request) -> str:
    # Split before decoding: a revision like refs/pr/1 arrives as one segment, refs%2Fpr%2F1.
    raw = request.scope.get("raw_path")
    if isinstance(raw, bytes):
        return raw.decode("latin-1")
    return quote(request.scope["path"])
