"""Listening sockets for `serve`, `hub serve` and the worker's metrics: bound before anything else starts,
so a port in use is one line naming it and the flag that changes it (exit 2), not a server's traceback."""

from __future__ import annotations

import errno
import socket
from typing import NoReturn

from app.cli import exit_codes


def listen(host: str, port: int, *, flag: str = "--port") -> socket.socket:
    """A socket listening on host:port (SO_REUSEADDR, as uvicorn binds); exits 2 when it cannot be bound."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        cannot_listen(exc, host, port, flag=flag)


def cannot_listen(exc: OSError, host: str, port: int, *, flag: str = "--port") -> NoReturn:
    """The one line for a socket that could not be bound: what, where, and the flag that changes it."""
    if exc.errno == errno.EADDRINUSE:
        exit_codes.fail(f"port {port} on {host} is already in use: stop what listens there, "
                        f"or pick another port with {flag} (e.g. {flag} {port + 1})")
    exit_codes.fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}; change --host or {flag}")
