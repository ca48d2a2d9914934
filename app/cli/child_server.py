"""`hfvet serve` as a child process on a free loopback port: for the demo, the live-server tests and benchmarks."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from app.errors import HfvetError

START_TIMEOUT = 60.0


class ServerStartError(HfvetError):
    """The child server exited or never answered /healthz; the message carries the end of its log."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def child_server(env: Mapping[str, str], log: Path, args: Sequence[str] = (), *, cwd: Path | None = None,
                 start_timeout: float = START_TIMEOUT) -> Iterator[str]:
    """Start `python -m app serve` with exactly ``env``; yield its URL once /healthz answers; always stop it."""
    port = free_port()
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", str(port), *args],  # noqa: S603
                                cwd=cwd, env=dict(env), stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, log, start_timeout)
        yield url
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[bytes], grace: float = 20) -> None:
    """SIGTERM, then SIGKILL if it is still running after ``grace`` seconds; reaped either way."""
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(grace)


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerStartError(f"hfvet serve exited with {proc.returncode}:\n{_tail(log)}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:  # noqa: S310 - loopback only
                if json.load(response).get("status") == "ok":
                    return
        except (OSError, ValueError):
            time.sleep(0.1)
    raise ServerStartError(f"hfvet serve did not answer /healthz within {timeout:g}s:\n{_tail(log)}")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:]
