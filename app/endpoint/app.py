"""The Hub endpoint as an ASGI app: every request is read into a ``Call``, routed on its raw path (a revision
like refs/pr/1 arrives as one segment, refs%2Fpr%2F1), and any refusal becomes the Hub's error answer."""

from __future__ import annotations

import logging

from starlette.datastructures import URL
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from app.endpoint import metrics
from app.endpoint.call import Call, call_of, not_found, refusal_response
from app.endpoint.files import resolve_file
from app.endpoint.listing import api
from app.services.hub_endpoint import Refusal
from app.state import AppState

log = logging.getLogger("hfvet.endpoint")
MAX_BODY = 1 << 20  # only paths-info sends a body: a list of paths


class HubEndpoint:
    """The endpoint under ``prefix`` ("/hub" in the API's app; "" on its own port)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def serves(self, path: str) -> bool:
        return not self.prefix or path == self.prefix or path.startswith(f"{self.prefix}/")

    async def __call__(self, state: AppState | None, scope: Scope, receive: Receive, send: Send) -> None:
        if state is None:  # a request before the lifespan ran
            await Response("starting", status_code=503)(scope, receive, send)
            return
        try:
            call = await call_of(state, scope, self.prefix)
            response = await route(call, await _body(receive, scope["method"]))
        except Refusal as refusal:
            if refusal.reason != "not-found":  # a path the Hub API has and hfvet does not serve is not a refusal
                metrics.REFUSALS.labels(reason=refusal.reason).inc()
            log.info("hub endpoint: %s %s refused (%s): %s%s", scope["method"], scope["path"], refusal.reason,
                     refusal.message, f" [{refusal.detail}]" if refusal.detail else "")
            response = refusal_response(refusal)
        await response(scope, receive, send)


async def route(call: Call, body: bytes) -> Response:
    if call.segments[:1] == ["api"]:
        return await api(call, body)
    if len(call.segments) >= 3 and call.segments[2] == "resolve":
        return await resolve_file(call)
    raise not_found()


async def _body(receive: Receive, method: str) -> bytes:
    if method != "POST":
        return b""
    chunks, size, more = [], 0, True
    while more:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise Refusal(413, None, "bad-request", "hfvet: request body too large")
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


def misdirected(path: str) -> bool:
    """A Hub API path sent to hfvet's own API (HF_ENDPOINT without its /hub): answered with a hint."""
    return path.startswith("/api/models/") or "/resolve/" in path


def hint(scope: Scope) -> Response:
    """The 404 a client pointed at hfvet's API root gets: its message names the right HF_ENDPOINT."""
    origin = str(URL(scope=scope).replace(path="", query="")).rstrip("/")
    message = f"hfvet: this is hfvet's API, not its Hub endpoint: set HF_ENDPOINT={origin}/hub"
    return JSONResponse({"error": message}, status_code=404, headers={"X-Error-Message": message})
