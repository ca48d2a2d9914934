"""`hfvet serve`: the API with its in-process job runner (SQLite migrations apply on start)."""

from __future__ import annotations

import ipaddress
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer

from app.cli import exit_codes
from app.db import tokens
from app.services.store import open_store
from app.settings import Settings

if TYPE_CHECKING:
    from fastapi import FastAPI


def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to bind (loopback unless a live token exists).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port.")] = 8000,
    access_log: Annotated[
        bool, typer.Option("--access-log/--no-access-log", help="Log one line per request.")
    ] = True,
) -> None:
    """Serve the HTTP API (POST /vet, GET /gate, POST /webhooks/huggingface, ...) and the dashboard at /ui/,
    and run vets.

    Vets run in child processes at a lower CPU priority (HFVET_JOB_ISOLATION, HFVET_JOB_NICE), or, with
    HFVET_QUEUE=procrastinate, in `hfvet worker`s.

    Webhooks need HFVET_WEBHOOK_SECRET; HFVET_POLL_SECONDS=N re-checks approved repos' branches every N s.

    A non-loopback --host needs a live (unrevoked, unexpired) token at startup; later, every write needs one.

    On SIGTERM, requests in flight get HFVET_SHUTDOWN_TIMEOUT seconds; gate answers still resolving
    referenced repos' branches on the hub stop at once.
    """
    from app.api.header_limits import header_limited
    from app.server import create_app

    settings = Settings()
    if not is_loopback(host) and not exit_codes.guard(lambda: _has_tokens(settings)):
        exit_codes.fail(f"refusing to listen on {host} while no live API token exists (none, or all revoked or "
                        "expired): "
                        "create one with `hfvet token create --role admin --name NAME` first")
    api = create_app(settings)
    run_until_stopped(api, host=host, port=port, log_level="info", access_log=access_log,
                      http=header_limited(settings.max_header_bytes, settings.max_headers),
                      timeout_graceful_shutdown=settings.shutdown_timeout)


def run_until_stopped(api: FastAPI, **config: Any) -> None:
    """uvicorn.run, with SIGTERM/SIGINT also telling gate answers in flight to stop resolving (app.server).

    uvicorn's graceful shutdown waits for requests in flight; one resolving thousands of references
    would hold it for minutes, and the worker thread would keep the process alive after it.
    """
    import uvicorn

    from app.server import stop_answers

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            stop_answers(api)
            super().handle_exit(sig, frame)

    Server(uvicorn.Config(api, **config)).run()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve anywhere


def _has_tokens(settings: Settings) -> bool:
    store = open_store(settings)
    try:
        with store.session() as session:
            return tokens.live_count(session) > 0
    finally:
        store.close()
