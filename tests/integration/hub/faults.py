"""The fault-injecting wrapper of the fixture hub, and helpers the hub source tests share."""

from __future__ import annotations

import asyncio

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.sources.hub import HubClient, HubSource

REPO = "acme/tiny"


class Sleeps(list[float]):
    """A recording stand-in for time.sleep: retries are checked without waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def source(url: str, repo: str = REPO, revision: str = "main", **kw: object) -> HubSource:
    return HubSource.open(repo, revision, hub=HubClient.create(url, False, **kw))  # type: ignore[arg-type]


# The fixture app wrapped so the next request matching a path fragment misbehaves.

DRIP_INTERVAL = 0.1  # seconds between the bytes of a dripped body...
DRIP_BYTES = 30  # ...for this many bytes, then the rest at once (the server cannot tell the client left)
DELAY = 0.6  # seconds a delayed answer waits before it starts


class FaultyHub:
    def __init__(self, inner: ASGIApp) -> None:
        self.inner = inner
        self.faults: list[tuple[str, str]] = []  # (path fragment, fault name), used once each
        self.requests = 0
        self.seen: list[tuple[str, bool]] = []  # (Host header, whether Authorization came) per request
        self.paths: list[str] = []  # the path of each request, in order

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.requests += 1
            self.paths.append(scope["path"])
            headers = dict(scope["headers"])
            self.seen.append((headers.get(b"host", b"").decode(), b"authorization" in headers))
            for i, (fragment, fault) in enumerate(self.faults):
                if fragment in scope["path"]:
                    del self.faults[i]
                    await getattr(self, fault.replace("-", "_"))(scope, receive, send)
                    return
        await self.inner(scope, receive, send)

    async def ignore_range(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(k, v) for k, v in scope["headers"] if k != b"range"]
        await self.inner(dict(scope, headers=headers), receive, send)

    async def shift_range(self, scope: Scope, receive: Receive, send: Send) -> None:
        def shift(value: bytes) -> bytes:
            start, end = (int(x) for x in value.decode().removeprefix("bytes=").split("-"))
            return f"bytes={start + 1}-{end + 1}".encode()

        headers = [(k, shift(v) if k == b"range" else v) for k, v in scope["headers"]]
        await self.inner(dict(scope, headers=headers), receive, send)

    async def other_commit(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def rewrite(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    (k, b"f" * 40 if k == b"x-repo-commit" else v) for k, v in message["headers"]
                ]
            await send(message)

        await self.inner(scope, receive, rewrite)

    async def short_body(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Content-Range stays right; the body (and Content-Length) stop halfway.
        left = 0

        async def cut(message: Message) -> None:
            nonlocal left
            if message["type"] == "http.response.start":
                left = int(dict(message["headers"])[b"content-length"]) // 2
                message["headers"] = [
                    (k, str(left).encode() if k == b"content-length" else v) for k, v in message["headers"]
                ]
            elif message["type"] == "http.response.body":
                message["body"] = message.get("body", b"")[:left]
                left -= len(message["body"])
            await send(message)

        await self.inner(scope, receive, cut)

    async def rate_limited(self, scope: Scope, receive: Receive, send: Send) -> None:
        await Response("slow down", 429, headers={"Retry-After": "3"})(scope, receive, send)

    async def unavailable(self, scope: Scope, receive: Receive, send: Send) -> None:
        await Response("down", 503)(scope, receive, send)

    async def rate_limited_long(self, scope: Scope, receive: Receive, send: Send) -> None:
        await Response("come back in an hour", 429, headers={"Retry-After": "3600"})(scope, receive, send)

    async def stall(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Accepts the request and never answers, until the client hangs up.
        while (await receive())["type"] != "http.disconnect":
            pass

    async def delay(self, scope: Scope, receive: Receive, send: Send) -> None:
        await asyncio.sleep(DELAY)  # slow but steady: then the real answer
        await self.inner(scope, receive, send)

    async def drip(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The real answer, its body first one byte at a time, ten bytes a second.
        async def slow(message: Message) -> None:
            if message["type"] == "http.response.body":
                body = message.get("body", b"")
                for i in range(min(len(body), DRIP_BYTES)):
                    await send({"type": "http.response.body", "body": body[i : i + 1], "more_body": True})
                    await asyncio.sleep(DRIP_INTERVAL)
                message = {**message, "body": body[DRIP_BYTES:]}
            await send(message)

        await self.inner(scope, receive, slow)

    async def redirect_elsewhere(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Another origin (localhost, not 127.0.0.1) that happens to be this same server.
        port = scope["server"][1]
        query = scope["query_string"].decode()
        target = f"http://localhost:{port}{scope['raw_path'].decode()}" + (f"?{query}" if query else "")
        await Response(status_code=302, headers={"Location": target})(scope, receive, send)


class SilentHub:
    """The fixture hub, except that every request whose path holds ``fragment`` is accepted and never
    answered (the tree listing: ``/tree/``; Range reads: ``/resolve/``), for as long as the client waits."""

    def __init__(self, inner: ASGIApp, fragment: str) -> None:
        self.inner = inner
        self.fragment = fragment
        self.stalled = 0  # requests left unanswered

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.fragment in scope["path"]:
            self.stalled += 1
            while (await receive())["type"] != "http.disconnect":
                pass
            return
        await self.inner(scope, receive, send)
