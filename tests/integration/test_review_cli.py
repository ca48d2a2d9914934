"""`hfvet review` against the local store and through a live `hfvet` API on loopback: the gate flips."""

from __future__ import annotations

import getpass
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from typer.testing import CliRunner

from app.cli.main import app
from app.db import tokens
from app.examples import build_examples
from app.hubfixture import FixtureHub
from app.server import create_app
from app.services.store import open_store
from app.settings import Settings
from tests.integration.vetted import REVIEW_REPO

runner = CliRunner()


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "hub"
    build_examples(root)
    monkeypatch.setenv("HFVET_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    for name in ("HFVET_SERVER", "HFVET_TOKEN", "HFVET_POLICY"):
        monkeypatch.delenv(name, raising=False)
    with FixtureHub(root) as served:
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        yield root


def vetted_sha(repo: str = REVIEW_REPO) -> str:
    result = runner.invoke(app, ["vet", repo, "--policy", "default", "--format", "json"])
    assert result.exit_code == 3, result.output  # review
    sha: str = json.loads(result.stdout)["revision"]
    return sha


def review(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["review", REVIEW_REPO, *args])
    return result.exit_code, result.stdout, result.stderr


def gate(sha: str) -> tuple[int, dict[str, object]]:
    result = runner.invoke(app, ["gate", REVIEW_REPO, "--revision", sha, "--format", "json"])
    return result.exit_code, json.loads(result.stdout)


def test_an_approval_in_the_local_store_flips_the_gate(hub: Path) -> None:
    sha = vetted_sha()
    assert gate(sha)[0] == 1
    code, out, _ = review("--revision", sha, "--approve", "--reason", "read the auto_map modules")
    assert code == 0 and "the gate approves it now" in out
    code, doc = gate(sha)
    assert code == 0 and doc["decided_by"] == f"cli:{getpass.getuser()} (admin)"
    code, _, err = review("--revision", sha, "--approve", "--reason", "again")
    assert code == 1 and "already-approved" in err
    code, out, _ = review("--revision", sha, "--reject", "--reason", "changed my mind")
    assert code == 0 and "refuses" in out and gate(sha)[0] == 1


@pytest.mark.parametrize(("args", "code", "message"), [
    (["--revision", "f" * 40, "--approve", "--reason", "x"], 4, "never vetted"),
    (["--revision", "main", "--approve", "--reason", "x"], 2, "40-hex"),
    (["--revision", "f" * 40, "--reason", "x"], 2, "--approve or --reject"),
    (["--revision", "f" * 40, "--approve", "--reject", "--reason", "x"], 2, "--approve or --reject"),
    (["--revision", "f" * 40, "--approve", "--reason", " "], 2, "needs a reason"),
])
def test_bad_local_reviews_are_refused(hub: Path, args: list[str], code: int, message: str) -> None:
    got, _, err = review(*args)
    assert got == code and message in err


@contextmanager
def live_api(settings: Settings) -> Iterator[str]:
    """The real API (with its lifespan) on a loopback port, stopped on exit."""
    sock = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(settings), log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the API did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def token(role: str) -> str:
    store = open_store(Settings())
    with store.session() as session:
        secret = tokens.create(session, f"{role}-cli", role, actor="test")
    store.close()
    return secret


def test_a_review_through_the_server_flips_the_gate(hub: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sha = vetted_sha()
    reader, reviewer = token("reader"), token("reviewer")
    with live_api(Settings()) as url:
        code, _, err = review("--revision", sha, "--approve", "--reason", "ok", "--server", url)
        assert code == 2 and "token" in err  # no HFVET_TOKEN: 401
        monkeypatch.setenv("HFVET_TOKEN", reader)
        code, _, err = review("--revision", sha, "--approve", "--reason", "ok", "--server", url)
        assert code == 1 and "role-too-low" in err
        monkeypatch.setenv("HFVET_TOKEN", reviewer)
        monkeypatch.setenv("HFVET_SERVER", url)  # the server from the environment this time
        code, out, _ = review("--revision", sha, "--approve", "--reason", "read the auto_map modules")
        assert code == 0 and "token:reviewer-cli (reviewer)" in out
        code, _, err = review("--revision", "e" * 40, "--approve", "--reason", "ok")
        assert code == 4 and "never vetted" in err
        code, doc = gate(sha)  # HFVET_SERVER is set: the gate asks the server
        assert code == 0 and doc["decided_by"] == "token:reviewer-cli (reviewer)"
    monkeypatch.delenv("HFVET_SERVER")
    code, doc = gate(sha)  # and the local store says the same
    assert code == 0 and doc["decided_by"] == "token:reviewer-cli (reviewer)"


def test_an_unreachable_server_is_an_error(hub: Path) -> None:
    code, _, err = review("--revision", "f" * 40, "--approve", "--reason", "x", "--server", "http://127.0.0.1:9")
    assert code == 2 and "cannot reach" in err


def test_credentials_in_the_server_url_are_never_printed(hub: Path) -> None:
    code, out, err = review("--revision", "f" * 40, "--approve", "--reason", "x",
                            "--server", "http://deploy:s3cr3t-token@127.0.0.1:9")
    assert code == 2 and "cannot reach" in err and "s3cr3t" not in out + err


def test_a_short_commit_id_is_reviewed_as_its_vetted_commit(hub: Path) -> None:
    sha = vetted_sha()
    code, out, _ = review("--revision", sha[:12], "--approve", "--reason", "read the auto_map modules")
    assert code == 0 and f"@{sha} recorded" in out
    assert gate(sha[:12]) == (0, gate(sha)[1])
