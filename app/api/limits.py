"""Request bodies are bounded: a body over the limit is refused with 413 before the app sees it."""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.errors import error_body

MAX_BODY_BYTES = 1024 * 1024  # webhook payloads and review requests are a few KiB


class BodyLimit:
    """ASGI middleware: refuse a declared Content-Length over the limit at once; read a chunked body
    (whose length nobody declared) up to the limit first, so even a route that ignores its body
    never runs for an oversized request."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        declared = _int(headers.get(b"content-length"))
        if declared is not None and declared > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        if declared is None and b"chunked" in headers.get(b"transfer-encoding", b"").lower():
            buffered = await self._read_bounded(receive)
            if buffered is None:
                await self._refuse(scope, receive, send)
                return
            receive = _replay(buffered, receive)
        await self.app(scope, receive, send)

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

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = error_body("body-too-large", f"the request body is over {self.max_bytes} bytes")
        await JSONResponse(body, status_code=413, headers={"Connection": "close"})(scope, receive, send)


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
