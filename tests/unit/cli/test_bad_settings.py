"""A bad setting stops every command at start with exit 2 (usage error) and one line naming it.

Exit 1 would read as *reject* to a deploy script, and a traceback names nothing; `serve` must
refuse to start rather than answer 500 to every vet. These run the real entry point.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

COMMANDS = {
    "vet": ["vet", "org/name", "--no-store"],
    "gate": ["gate", "org/name", "--revision", "main"],
    "serve": ["serve", "--port", "0"],
    "scan": ["scan", "README.md"],
    "worker": ["worker"],
    "gate --server": ["gate", "org/name", "--server", "http://127.0.0.1:9"],  # no Settings on this path
    "download --server": ["download", "org/name", "--local-dir", "out", "--server", "http://127.0.0.1:9"],
    "review": ["review", "org/name", "--revision", "0" * 40, "--approve", "--reason", "r"],
    "db": ["db", "upgrade"],
}


def run_hfvet(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("HFVET_")}
    environment |= {"XDG_DATA_HOME": str(tmp_path), **env}
    return subprocess.run([sys.executable, "-m", "app", *args], env=environment, capture_output=True,
                          text=True, timeout=30, cwd=Path(__file__).resolve().parents[3])


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("endpoint", ["not-a-url", "", "http://"])
def test_a_bad_hub_endpoint_exits_2_naming_it(command: str, endpoint: str, tmp_path: Path) -> None:
    result = run_hfvet(COMMANDS[command], tmp_path, HF_ENDPOINT=endpoint)
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"error: HF_ENDPOINT: not an http:// or https:// URL with a host: {endpoint!r}\n"
    assert result.stdout == ""


def test_a_number_out_of_range_stops_serve(tmp_path: Path) -> None:
    result = run_hfvet(COMMANDS["serve"], tmp_path, HFVET_JOB_WORKERS="0")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: HFVET_JOB_WORKERS: ")


def test_a_bad_endpoint_option_exits_2(tmp_path: Path) -> None:
    result = run_hfvet(["vet", "org/name", "--no-store", "--endpoint", "hub.example"], tmp_path)
    assert result.returncode == 2
    assert result.stderr == "error: --endpoint: not an http:// or https:// URL with a host: 'hub.example'\n"
