"""Bounded work per gate answer (issue 25, item 1): a vetted repo naming 3,000 repos by branch.

Before: every anonymous `GET /gate` for its commit resolved all 3,000 on the hub, uncached; 40
callers made 88,000 hub requests; the server kept resolving after the clients left, and SIGTERM
did not stop it. Now: resolutions are shared (per process and, through the store, per deployment)
for a TTL, an answer makes at most HFVET_GATE_HUB_BUDGET of them and refuses past it, and a client
that leaves or a SIGTERM stops the resolving.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from app.cli.main import app as cli
from app.examples import build_examples
from app.hubfixture import AppServer, create_app
from tests.integration.api.fanout import (
    REFERENCES,
    REPO,
    SHA,
    CountingHub,
    copy_store,
    prepared_store,
    serving,
    write_fanout_repo,
)

pytestmark = pytest.mark.xdist_group("gate-fanout")  # one counting hub; servers started one after another
BUDGET = 64  # HFVET_GATE_HUB_BUDGET's default
FEW = 50  # references a report may name and still be judged: each a branch the gate resolves
TTLS = {"HFVET_HUB_RESOLVE_TTL": "600", "HFVET_HUB_RESOLVE_FAILURE_TTL": "600"}  # nothing expires mid-test


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[CountingHub, str, Path]]:
    root = tmp_path_factory.mktemp("fanout-hub")
    build_examples(root)  # none of the referenced repos exists: each resolution is a 404
    write_fanout_repo(root)
    counting = CountingHub(create_app(root))
    with AppServer(counting) as server:
        yield counting, server.url, root


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Store files holding REPO@SHA's report naming REFERENCES, or FEW, repos by branch (copied per test)."""
    home = tmp_path_factory.mktemp("fanout-stores")
    return {n: prepared_store(home, n) for n in (REFERENCES, FEW)}


@pytest.fixture
def counting(hub: tuple[CountingHub, str, Path]) -> Iterator[CountingHub]:
    hub[0].resolutions, hub[0].delay = 0, 0.0
    yield hub[0]
    hub[0].delay = 0.0


def gate(url: str, timeout: float = 120) -> httpx.Response:
    return httpx.get(f"{url}/gate", params={"repo": REPO, "revision": SHA}, timeout=timeout)


def test_one_answer_for_3000_references_refuses_naming_the_budget(
        hub: tuple[CountingHub, str, Path], stores: dict[int, Path], counting: CountingHub, tmp_path: Path) -> None:
    with serving(hub[1], copy_store(stores[REFERENCES], tmp_path), tmp_path / "a", **TTLS) as server:
        answer = gate(server.url)
    assert answer.status_code == 403
    body = answer.json()
    assert body["approved"] is False and body["verdict"] == "reject"
    assert "references exceed the gate's hub budget" in body["reasons"][0]
    assert counting.resolutions <= BUDGET


def test_forty_callers_for_3000_references_cost_the_hub_at_most_one_budget(
        hub: tuple[CountingHub, str, Path], stores: dict[int, Path], counting: CountingHub, tmp_path: Path) -> None:
    with (serving(hub[1], copy_store(stores[REFERENCES], tmp_path), tmp_path / "a", **TTLS) as server,
          ThreadPoolExecutor(8) as pool):
        statuses = list(pool.map(lambda _: gate(server.url).status_code, range(40)))
    assert statuses == [403] * 40
    assert counting.resolutions <= BUDGET


def test_answers_within_the_ttl_share_the_resolutions(
        hub: tuple[CountingHub, str, Path], stores: dict[int, Path], counting: CountingHub, tmp_path: Path) -> None:
    with (serving(hub[1], copy_store(stores[FEW], tmp_path), tmp_path / "a", **TTLS) as server,
          ThreadPoolExecutor(8) as pool):  # at once: one hub call per (repo, branch) however many ask
        answers = list(pool.map(lambda _: gate(server.url), range(40)))
    assert {a.status_code for a in answers} == {403}
    assert all("referenced-repo-elsewhere" in " ".join(a.json()["reasons"]) for a in answers)
    assert counting.resolutions == FEW  # not 40 x FEW


def test_a_second_replica_reuses_the_resolutions_in_the_store(
        hub: tuple[CountingHub, str, Path], stores: dict[int, Path], counting: CountingHub, tmp_path: Path) -> None:
    store_url = copy_store(stores[FEW], tmp_path)
    with serving(hub[1], store_url, tmp_path / "a", **TTLS) as first:
        assert gate(first.url).status_code == 403
    assert counting.resolutions == FEW
    with serving(hub[1], store_url, tmp_path / "b", **TTLS) as second:
        assert gate(second.url).status_code == 403
    assert counting.resolutions == FEW  # every one answered from the shared rows


def test_a_vet_of_3000_references_reports_too_many_references(
        hub: tuple[CountingHub, str, Path], tmp_path: Path) -> None:
    env = {"HF_ENDPOINT": hub[1], "HFVET_DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}",
           "HFVET_POLICY": "default", "HF_HUB_DISABLE_XET": "1"}
    result = CliRunner().invoke(cli, ["vet", REPO, "--format", "json"], env=env)
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["verdict"] == "reject"
    assert [f["path"] for f in report["findings"] if f["rule"] == "too-many-references"] == ["config.json"]
    assert any(r["rule"] == "too-many-references" for r in report["reasons"])


def slow_unbounded(counting: CountingHub) -> dict[str, str]:
    """No practical budget, and a hub taking 50 ms a resolution: one answer would resolve for minutes."""
    counting.delay = 0.05
    return {**TTLS, "HFVET_GATE_HUB_BUDGET": "100000"}


def wait_for_resolutions(counting: CountingHub, at_least: int, within: float = 60) -> None:
    deadline = time.monotonic() + within
    while counting.resolutions < at_least:
        assert time.monotonic() < deadline, "the gate never started resolving"
        time.sleep(0.05)


def wait_until_flat(counting: CountingHub, within: float) -> int:
    """The count once it stopped growing for a second (before the fix it grows for minutes: 20 a second)."""
    deadline = time.monotonic() + within
    last = counting.resolutions
    while time.monotonic() < deadline:
        time.sleep(1.0)
        if counting.resolutions - last <= 1:
            return counting.resolutions
        last = counting.resolutions
    raise AssertionError("the server kept resolving for a client that left")


def send_gate_request(url: str) -> socket.socket:
    """A raw GET /gate whose answer is never read: the test closes the socket when it likes."""
    host, port = url.removeprefix("http://").split(":")
    conn = socket.create_connection((host, int(port)), timeout=5)
    conn.sendall(f"GET /gate?repo={REPO}&revision={SHA} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    return conn


def test_a_client_that_leaves_stops_the_resolving(
        hub: tuple[CountingHub, str, Path], stores: dict[int, Path], counting: CountingHub, tmp_path: Path) -> None:
    env = slow_unbounded(counting)
    with serving(hub[1], copy_store(stores[REFERENCES], tmp_path), tmp_path / "a", **env) as server:
        conn = send_gate_request(server.url)
        wait_for_resolutions(counting, 5)
        conn.close()  # the client leaves mid-answer
        settled = wait_until_flat(counting, within=15)  # noticed within a 0.25 s poll, even on a loaded machine
        time.sleep(2.0)
        assert counting.resolutions - settled <= 1, "the server kept resolving for a client that left"
        assert counting.resolutions < 1000  # of 3,000
        assert httpx.get(f"{server.url}/healthz", timeout=5).status_code == 200


def test_sigterm_stops_a_resolving_server_within_seconds(
        hub: tuple[CountingHub, str, Path], stores: dict[int, Path], counting: CountingHub, tmp_path: Path) -> None:
    env = slow_unbounded(counting)
    with serving(hub[1], copy_store(stores[REFERENCES], tmp_path), tmp_path / "a", **env) as server:
        conn = send_gate_request(server.url)
        wait_for_resolutions(counting, 5)
        assert server.proc is not None
        proc = server.proc
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            with contextlib.suppress(subprocess.TimeoutExpired):  # reported by the assertion below
                proc.wait(15)
        finally:
            conn.close()
            server.stop()  # SIGKILL if it is still running
        assert time.monotonic() - started < 15, "hfvet serve kept resolving after SIGTERM"
        stopped_at = counting.resolutions
        time.sleep(0.5)
        assert counting.resolutions == stopped_at
