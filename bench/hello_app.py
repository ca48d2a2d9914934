"""The ceiling references for bench_gate.py, served by the same uvicorn as `hfvet serve` (same log
level and access log): what one worker of this HTTP stack does on this machine at the moment.

`GET /hello`: a bare FastAPI app with one `async def` route. `GET /raw`: a fixed answer sent by a
plain ASGI callable in front of it, without FastAPI (what the gate's fast path is, at best).
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

hello = FastAPI()


@hello.get("/hello")
async def say_hello() -> dict[str, str]:
    return {"status": "ok"}


_BODY = b'{"status":"ok"}'
_HEADERS = [(b"content-length", str(len(_BODY)).encode()), (b"content-type", b"application/json")]


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "http" and scope["path"] == "/raw":
        await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
        await send({"type": "http.response.body", "body": _BODY})
        return
    await hello(scope, receive, send)
