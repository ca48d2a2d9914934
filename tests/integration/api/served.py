"""A live `hfvet serve` subprocess on loopback, stopped (and waited for) when the block ends."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
START_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def hfvet(*args: str, env: Mapping[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`hfvet ARGS` as a fresh process running this tree's code."""
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=timeout, check=False)


@contextmanager
def live_server(env: Mapping[str, str], log: Path) -> Iterator[str]:
    """Start `hfvet serve` with ``env`` added; yield its base URL once /healthz answers."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", str(port)], cwd=ROOT,
                                env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"hfvet serve exited {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
                if json.load(response).get("status") == "ok":
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"hfvet serve did not answer within {START_TIMEOUT}s: {log.read_text(errors='replace')[-2000:]}")
