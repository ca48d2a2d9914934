"""The fixture hub behind a byte-counting ASGI wrapper, run on a background thread.

Bytes are counted where the hub sends response bodies, so the figure covers every request the
client made (API JSON and file ranges) independent of what the client says about itself.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn

from app.hubfixture import create_app

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


@dataclass
class Counts:
    requests: int = 0
    body_bytes: int = 0  # every response body
    file_bytes: int = 0  # bodies of /resolve/ responses (file content)
    per_file: Counter[str] = field(default_factory=Counter)  # file_bytes by the path after /resolve/<rev>/


class ByteCounter:
    def __init__(self, app: Asgi) -> None:
        self._app = app
        self._lock = threading.Lock()
        self.counts = Counts()

    def take(self) -> Counts:
        """The counts so far, and start again from zero."""
        with self._lock:
            counts, self.counts = self.counts, Counts()
        return counts

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        path = scope.get("path", "")
        is_file = "/resolve/" in path
        file_path = path.split("/resolve/", 1)[1].split("/", 1)[-1] if is_file else ""

        async def counting_send(message: Message) -> None:
            if message["type"] == "http.response.body":
                size = len(message.get("body", b""))
                with self._lock:
                    self.counts.body_bytes += size
                    if is_file:
                        self.counts.file_bytes += size
                        self.counts.per_file[file_path] += size
            await send(message)

        with self._lock:
            self.counts.requests += 1
        await self._app(scope, receive, counting_send)


@contextmanager
def counting_hub(root: Path) -> Iterator[tuple[str, ByteCounter]]:
    """`with counting_hub(root) as (url, counter):` — url is the HF_ENDPOINT to use."""
    counter = ByteCounter(create_app(root))
    sock = socket.create_server(("127.0.0.1", 0))
    config = uvicorn.Config(counter, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="bench-hub", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("fixture hub did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", counter
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
