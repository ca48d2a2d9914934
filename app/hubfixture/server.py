"""Running the fixture hub: blocking ``serve()`` for the CLI, ``FixtureHub`` thread for tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Self

import uvicorn
from starlette.types import ASGIApp

from app.hubfixture.app import DEFAULT_PAGE_SIZE, create_app

_START_TIMEOUT = 10.0


def serve(
    root: Path,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    tokens: Iterable[str] = (),
    on_ready: Callable[[str], None] | None = None,
    log_level: str = "info",
    latency_ms: float = 0,
    sock: socket.socket | None = None,
) -> None:
    """Serve ``root`` until interrupted (Ctrl-C). ``on_ready`` gets the base URL once bound
    (useful with ``port=0``, which picks a free port). ``sock``, if given, is already bound to host:port."""
    sock = sock or _bind(host, port)
    server = _server(create_app(root, tokens=tokens, latency_ms=latency_ms), log_level)
    if on_ready is not None:
        on_ready(_url(host, sock))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


class AppServer:
    """Any ASGI app on a background uvicorn thread; ``start()`` returns its base URL."""

    def __init__(self, app: ASGIApp, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self._app = app
        self._host = host
        self._port = port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self.url = ""

    def start(self) -> str:
        if self._thread is not None:
            raise RuntimeError("fixture hub already started")
        self._sock = _bind(self._host, self._port)
        self._server = _server(self._app, "warning")
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, name="fixture-hub", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("fixture hub failed to start")
            time.sleep(0.01)
        self.url = _url(self._host, self._sock)
        return self.url

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(_START_TIMEOUT)
        if self._sock is not None:
            self._sock.close()
        self._server = self._thread = self._sock = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class FixtureHub(AppServer):
    """The fixture hub serving ``root`` on a background thread (tests, the demo)."""

    def __init__(
        self,
        root: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        tokens: Iterable[str] = (),
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> None:
        super().__init__(create_app(root, tokens=tokens, page_size=page_size), host=host, port=port)


@contextmanager
def running_hub(
    root: Path, *, tokens: Iterable[str] = (), page_size: int = DEFAULT_PAGE_SIZE
) -> Iterator[str]:
    """``with running_hub(root) as url:`` — the base URL to use as ``HF_ENDPOINT``."""
    with FixtureHub(root, tokens=tokens, page_size=page_size) as hub:
        yield hub.url


def _server(app: ASGIApp, log_level: str) -> uvicorn.Server:
    config = uvicorn.Config(app, log_level=log_level, lifespan="off", access_log=log_level == "info")
    return uvicorn.Server(config)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family)


def _url(host: str, sock: socket.socket) -> str:
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"
