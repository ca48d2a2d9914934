"""A live `hfvet serve` for the service benchmarks: a store prepared by vetting one fixture repo.

The fixture hub runs in this process (a thread); the server and every `hfvet` call are fresh
processes running this checkout's code. Everything is stopped when the block ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
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
    from app.cli.child_server import child_server

    with child_server({**os.environ, **env}, log, serve_args, cwd=ROOT) as url:
        yield url
