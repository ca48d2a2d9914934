"""The suite's own guards hold: no traffic beyond loopback, warnings are errors."""

from __future__ import annotations

import socket
import warnings

import pytest
from pytest_socket import SocketConnectBlockedError


def test_connections_beyond_loopback_are_blocked() -> None:
    # TEST-NET-1 is never routed; the guard refuses before any packet. It warns first, and warnings are errors.
    blocked = (SocketConnectBlockedError, UserWarning)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s, pytest.raises(blocked, match=r"192\.0\.2\.1"):
        s.connect(("192.0.2.1", 443))


def test_loopback_is_allowed() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=5):
            pass


def test_warnings_fail_the_suite() -> None:
    with pytest.raises(UserWarning):
        warnings.warn("surfaced as an error", UserWarning, stacklevel=1)
