"""Request bounds at the edge of the app: headers (431), body size (413) and JSON nesting (400) are
checked before any route runs. `hfvet serve` bounds headers earlier still, while they arrive
(app.api.header_limits); the check here covers the app under any other server."""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.errors import error_body
from app.api.json_depth import too_deep

MAX_BODY_BYTES = 1024 * 1024  # webhook payloads and review requests are a few KiB
MAX_JSON_DEPTH = 64  # the Hub's webhooks and hfvet's own bodies nest 3 or 4 levels
MAX_HEADER_BYTES = 64 * 1024
MAX_HEADERS = 100


class BodyLimit:
    """ASGI middleware: refuse too many or too large headers, and a declared Content-Length over the
    limit, at once; read any other body (declared or chunked) up to the limit first, so even a route
    that ignores its body never runs for an oversized or too deeply nested request."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES, max_json_depth: int = MAX_JSON_DEPTH,
                 max_header_bytes: int = MAX_HEADER_BYTES, max_headers: int = MAX_HEADERS) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_json_depth = max_json_depth
        self.max_header_bytes = max_header_bytes
        self.max_headers = max_headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if refusal := self._header_refusal(scope["headers"]):
            await refusal(scope, receive, send)
            return
        headers = dict(scope["headers"])
        declared = _int(headers.get(b"content-length"))
        if declared is not None and declared > self.max_bytes:
            await self._too_large()(scope, receive, send)
            return
        if declared or b"chunked" in headers.get(b"transfer-encoding", b"").lower():
            buffered = await self._read_bounded(receive)
            if buffered is None:
                await self._too_large()(scope, receive, send)
                return
            if too_deep(b"".join(m.get("body", b"") for m in buffered), self.max_json_depth):
                await self._too_deep()(scope, receive, send)
                return
            receive = _replay(buffered, receive)
        await self.app(scope, receive, send)

    def _header_refusal(self, headers: list[tuple[bytes, bytes]]) -> JSONResponse | None:
        if len(headers) > self.max_headers:
            return _refusal(431, "too-many-headers", f"a request has at most {self.max_headers} headers")
        if sum(len(name) + len(value) + 4 for name, value in headers) > self.max_header_bytes:
            return _refusal(431, "headers-too-large", f"a request's headers are at most {self.max_header_bytes} bytes")
        return None

    async def _read_bounded(self, receive: Receive) -> list[Message] | None:
        """The body's messages, or None once they pass the limit (the rest is never read)."""
        messages: list[Message] = []
        seen = 0
        while True:
            message = await receive()
            messages.append(message)
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                return None
            if message["type"] != "http.request" or not message.get("more_body", False):
                return messages

    def _too_large(self) -> JSONResponse:
        return _refusal(413, "body-too-large", f"the request body is over {self.max_bytes} bytes")

    def _too_deep(self) -> JSONResponse:
        return _refusal(400, "json-too-deep", f"the JSON body nests more than {self.max_json_depth} levels")


def _refusal(status: int, code: str, message: str) -> JSONResponse:
    # The rest of an unread body would be taken for the next request: the connection ends here.
    return JSONResponse(error_body(code, message), status_code=status, headers={"Connection": "close"})


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed


def _int(value: bytes | None) -> int | None:
    try:
        return None if value is None else int(value)
    except ValueError:
        return None  # h11 refuses a malformed length before the app sees it
