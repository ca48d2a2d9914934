"""A real `hfvet serve` subprocess on a loopback port, the fixture hub behind it, and store probes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text
from starlette.types import ASGIApp, Receive, Scope, Send
from typer.testing import CliRunner

from app.cli.child_server import free_port
from app.cli.main import app as cli

ROOT = Path(__file__).resolve().parents[3]  # the checkout under test: the subprocess runs this code
START_TIMEOUT = 60.0
TABLES = ("repos", "revisions", "reports", "vets", "audit_log", "tokens", "reviews")


class SlowHub:
    """The fixture hub app, with file reads (`/resolve/`) held back by ``delay`` seconds each, so a
    vet can be caught in the middle; ``file_reads`` counts them."""

    def __init__(self, inner: ASGIApp) -> None:
        self.inner = inner
        self.delay = 0.0
        self.file_reads = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and "/resolve/" in scope["path"]:
            self.file_reads += 1
            if self.delay:
                await asyncio.sleep(self.delay)
        await self.inner(scope, receive, send)


def server_env(hub_url: str, store_url: str, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HFVET_", "HUGGING"))}
    env |= {"PYTHONPATH": str(ROOT), "HF_ENDPOINT": hub_url, "HFVET_DATABASE_URL": store_url,
            "HF_HOME": str(home / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_XET": "1",
            "HFVET_RATE_LIMIT_BURST": "100000"}  # these tests send bursts on purpose; the limit has its own tests
    return env | extra


def create_token(store_url: str, role: str, name: str) -> str:
    """`hfvet token create`: the secret is alone on the last line of stdout."""
    result = CliRunner().invoke(cli, ["token", "create", "--role", role, "--name", name],
                                env={"HFVET_DATABASE_URL": store_url})
    assert result.exit_code == 0, result.output
    return result.stdout.strip().splitlines()[-1]


def revoke_token(store_url: str, name: str) -> None:
    result = CliRunner().invoke(cli, ["token", "revoke", name], env={"HFVET_DATABASE_URL": store_url})
    assert result.exit_code == 0, result.output


def row_counts(store_url: str) -> dict[str, int]:
    engine = create_engine(store_url)
    try:
        with engine.connect() as conn:
            return {t: conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one() for t in TABLES}  # noqa: S608
    finally:
        engine.dispose()


class LiveServer:
    """`python -m app serve` as a child process; ``start()`` returns once /healthz answers."""

    def __init__(self, env: dict[str, str], log: Path, *, hub_port: bool = False) -> None:
        self.env = env
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.hub_port = hub_port  # also serve the Hub endpoint alone on a port (`--hub-port`)
        self.hub_url = ""  # the Hub endpoint: URL/hub, or the --hub-port's root

    def start(self) -> str:
        port = free_port()
        args = [sys.executable, "-m", "app", "serve", "--port", str(port)]
        if self.hub_port:
            hub_port = free_port()
            args += ["--hub-port", str(hub_port)]
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(args, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{port}"
        self.hub_url = f"http://127.0.0.1:{hub_port}" if self.hub_port else f"{self.url}/hub"
        self._wait_healthy()
        return self.url

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"hfvet serve exited {self.proc.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"hfvet serve not healthy in {START_TIMEOUT}s:\n{self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL: no shutdown hooks run, as when a machine loses power."""
        if self.proc is not None:
            kill_now(self.proc)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            stop_gently(self.proc, grace=15)
            self.proc = None


def kill_now(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL and reap: nothing of the process's own shutdown runs."""
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)


def stop_gently(proc: subprocess.Popen[bytes], *, grace: float) -> None:
    """SIGTERM, then SIGKILL if it is still running after ``grace`` seconds."""
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
