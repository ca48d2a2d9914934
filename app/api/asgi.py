"""The server's ASGI application: FastAPI, with the gate's fast twin (app.api.routes.gate_fast) in front of its
middleware and routing, and the security headers (app.api.security) on every answer of either."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

from app.api.openapi import with_edge_answers
from app.api.routes import gate_fast
from app.api.security import with_security_headers
from app.endpoint.app import HubEndpoint, hint, misdirected

MOUNTED = HubEndpoint("/hub")  # HF_ENDPOINT=http://hfvet:8000/hub
ALONE = HubEndpoint("")  # on `hfvet serve --hub-port`: HF_ENDPOINT=http://hfvet:8001


class HfvetAPI(FastAPI):
    """FastAPI, with the gate's cached answers sent before its middleware and routing run, and the
    security headers (app.api.security) on every answer of either; its OpenAPI schema documents the
    answers of the edge in front of every route too (app.api.openapi).

    The Hub endpoint (app.endpoint) answers under /hub, and alone on ``hub_port`` (`hfvet serve --hub-port`):
    in front of FastAPI's middleware too, since its reads include a POST (paths-info) that the rate limit
    for writes must not count, and its bodies are bounded by the endpoint itself."""

    hub_port: int | None = None

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is None:
            self.openapi_schema = with_edge_answers(super().openapi())
        return self.openapi_schema

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            send = with_security_headers(send, scope["path"])
        hub = self._hub_endpoint(scope)
        if hub is not None:
            await hub(getattr(self.state, "hfvet", None), scope, receive, send)
            return
        if scope["type"] == "http" and misdirected(scope["path"]):
            await hint(scope)(scope, receive, send)
            return
        gate = scope["type"] == "http" and scope["method"] == "GET" and scope["path"] == "/gate"
        # getattr: the state is set by the lifespan, which a request may precede
        if gate and await gate_fast.answered(getattr(self.state, "hfvet", None), scope, receive, send):
            return
        await super().__call__(scope, receive, send)

    def _hub_endpoint(self, scope: Scope) -> HubEndpoint | None:
        if scope["type"] != "http":
            return None
        server = scope.get("server")
        if self.hub_port is not None and server is not None and server[1] == self.hub_port:
            return None if scope["path"] == "/healthz" else ALONE  # a probe of the endpoint's own port
        return MOUNTED if MOUNTED.serves(scope["path"]) else None
