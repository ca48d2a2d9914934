"""The README's quickstart runs as written (issue 27): its commands, read from the marked block, one after the
other against the fixture hub, with a temporary store, the repo served only to its token, and a free port.

What the test changes, and only that: `HF_ENDPOINT` and `HF_TOKEN` name the fixture hub and its token, `serve`
gets a free port and runs in the background until /healthz and /ui/ answered, and the install line is not run
(this interpreter's environment is that install; scripts/setup.sh is CI's own first step).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.cli.child_server import free_port
from app.examples import build_examples
from app.hubfixture import FixtureHub

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- quickstart:"
TOKEN = "hf_quickstart_token"
_COMMENT = re.compile(r"\s+#.*$")
_CAPTURE = re.compile(r"^(\w+)=\$\((.*)\)$")
_ASSIGN = re.compile(r"^(?:export\s+)?(\w+)=(\S*)$")


def quickstart_commands() -> list[str]:
    """The marked block's commands, comments dropped, in order."""
    readme = (ROOT / "README.md").read_text()
    assert MARKER in readme, "README.md lost its quickstart marker"
    block = readme.split(MARKER, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [_COMMENT.sub("", line).strip() for line in block.splitlines() if _COMMENT.sub("", line).strip()]


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[str]:
    """The example repos, the quickstart's repo private: no file without the token."""
    root = tmp_path / "hub"
    build_examples(root)
    meta = root / "nvidia" / "DeepSeek-V4-Flash-NVFP4" / ".hub.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "private": True, "tokens": [TOKEN]}))
    with FixtureHub(root) as served:
        yield served.url


def test_the_readme_quickstart_runs_against_the_fixture_hub(hub: str, tmp_path: Path) -> None:
    commands = quickstart_commands()
    assert commands[0].startswith("bash scripts/setup.sh") and (ROOT / "scripts" / "setup.sh").exists()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "HFVET_DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}", "HF_HOME": str(tmp_path / "hf-home"),
           "NO_COLOR": "1"}
    env.pop("HFVET_SERVER", None)
    work = tmp_path / "work"
    work.mkdir()
    for command in commands[1:]:
        if command.startswith("hfvet serve"):
            check_serve(command, env, work)
            continue
        if found := _CAPTURE.match(command):
            env[found.group(1)] = run(found.group(2), env, work).stdout.strip()
            continue
        if found := _ASSIGN.match(command):
            name, value = found.groups()
            env[name] = {"HF_ENDPOINT": hub, "HF_TOKEN": TOKEN}.get(name, value)
            continue
        result = run(command, env, work)
        if command.startswith("hfvet demo"):
            assert "nvidia/DeepSeek-V4-Flash-NVFP4" in result.stdout and "403" in result.stdout
        if command.startswith("hfvet download"):
            assert result.stdout.strip() == env["SHA"]
    assert re.fullmatch(r"[0-9a-f]{40}", env["SHA"]), env["SHA"]
    assert (work / "model" / "config.json").is_file()  # the download landed the approved files
    steps = {found.group(1) for found in re.finditer(r"\bhfvet (\w+)", "\n".join(commands))}
    assert steps >= {"demo", "vet", "gate", "download", "serve"}, steps


def run(command: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["bash", "-c", command], env=env, cwd=cwd, capture_output=True, text=True,
                            timeout=600, check=False)
    assert result.returncode == 0, f"{command!r} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


def check_serve(command: str, env: dict[str, str], cwd: Path) -> None:
    """`hfvet serve` as the README starts it (on a free port): /healthz answers, the dashboard lists the repo."""
    port = free_port()
    args = re.sub(r"--port \d+", f"--port {port}", command)
    log = cwd / "serve.log"
    with log.open("w") as sink, subprocess.Popen(["bash", "-c", f"exec {args}"], env=env, cwd=cwd,
                                                 stdout=sink, stderr=subprocess.STDOUT) as server:
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while not answers(f"{url}/healthz"):
                assert server.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
            home = httpx.get(f"{url}/ui/", timeout=10)
            assert home.status_code == 200
            assert env["REPO"] in home.text and env["SHA"] in home.text  # deployable, at the approved commit
        finally:
            server.terminate()
            server.wait(timeout=30)


def answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
