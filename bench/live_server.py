"""A live `hfvet serve` for the service benchmarks: a store prepared by vetting one fixture repo.

The fixture hub runs in this process (a thread); the server and every `hfvet` call are fresh
processes running this checkout's code. Everything is stopped when the block ends.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPO = "nvidia/DeepSeek-V4-Flash-NVFP4"


@dataclass(frozen=True)
class Live:
    url: str
    sha: str  # the approved commit of REPO
    env: dict[str, str]


def hfvet(*args: str, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=600, check=False)


@contextmanager
def prepared_server(extra_env: Mapping[str, str] | None = None, serve_args: tuple[str, ...] = ()) -> Iterator[Live]:
    from app.examples import build_examples
    from app.hubfixture import FixtureHub

    with tempfile.TemporaryDirectory(prefix="hfvet-bench-") as tmp:
        build_examples(Path(tmp) / "hub")
        with FixtureHub(Path(tmp) / "hub") as hub:
            env = {"HF_ENDPOINT": hub.url, "HFVET_DATABASE_URL": f"sqlite:///{tmp}/store.db", **(extra_env or {})}
            vetted = hfvet("vet", REPO, "--policy", "default", "--format", "json", env=env)
            if vetted.returncode != 0:
                raise SystemExit(f"vetting {REPO} failed ({vetted.returncode}): {vetted.stderr[-2000:]}")
            sha = json.loads(vetted.stdout)["revision"]
            with _serve(env, Path(tmp) / "serve.log", serve_args) as url:
                yield Live(url, sha, env)


@contextmanager
def _serve(env: Mapping[str, str], log: Path, serve_args: tuple[str, ...] = ()) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", str(port), *serve_args], cwd=ROOT,
                                env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"hfvet serve exited {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2):  # noqa: S310 (loopback http)
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("hfvet serve did not start within 60 s")
