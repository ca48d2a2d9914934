"""A live `hfvet serve` subprocess on loopback, stopped (and waited for) when the block ends."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from app.cli.child_server import child_server

ROOT = Path(__file__).resolve().parents[3]


def hfvet(*args: str, env: Mapping[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`hfvet ARGS` as a fresh process running this tree's code."""
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=timeout, check=False)


@contextmanager
def live_server(env: Mapping[str, str], log: Path) -> Iterator[str]:
    """Start `hfvet serve` with ``env`` added; yield its base URL once /healthz answers."""
    with child_server({**os.environ, **env}, log, cwd=ROOT) as url:
        yield url
