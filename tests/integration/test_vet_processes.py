"""The server's own queue vets in child processes (app.jobs.processes): the same report as a vet in the
server, at a lower CPU priority, and a child that dies fails only its own vet, loudly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psutil
import pytest

from app.core import report_json
from app.core.jobs import VetJob
from app.db.session import upgrade
from app.examples import build_examples
from app.hubfixture import AppServer, create_app
from app.jobs.processes import ProcessVets, VetProcessError
from app.services.store import open_store
from app.services.vetting import vet_remote
from app.settings import Settings
from app.sources.hub import HubClient, resolve_revision
from tests.integration.api.live import LiveServer, SlowHub, create_token, server_env
from tests.integration.vetted import APPROVE_REPO, REJECT_REPO


@dataclass
class World:
    settings: Settings
    hub: SlowHub
    vets: ProcessVets

    def job(self, repo: str, sha: str | None = None) -> VetJob:
        sha = sha or resolve_revision(repo, "main", HubClient.from_settings(self.settings))
        return VetJob(id="job", repo=repo, requested_revision="main", sha=sha, policy_name="default",
                      policy_sha256="", status="running", requested_by="test", created_at=datetime.now(UTC),
                      started_at=None, finished_at=None, attempts=1, error=None, report_id=None)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("hub")
    build_examples(root)
    store_url = f"sqlite:///{tmp_path_factory.mktemp('store') / 'store.db'}"
    upgrade(store_url)
    slow = SlowHub(create_app(root))
    with AppServer(slow) as server:
        settings = Settings(HF_ENDPOINT=server.url, database_url=store_url)  # type: ignore[call-arg]
        vets = ProcessVets(settings, processes=1, nice=7)
        try:
            yield World(settings, slow, vets)
        finally:
            vets.close()


def comparable(document: dict[str, object]) -> dict[str, object]:
    """A report without what differs between any two vets of the same bytes: times, and the repo's
    total of bytes read (a process's first vet of this repo reads 648 bytes fewer than its later ones;
    every file's own count is equal)."""
    drop = {"seconds", "decided_at", "startedAt", "finishedAt", "stats"}
    if isinstance(document, dict):
        return {k: comparable(v) for k, v in document.items() if k not in drop}  # type: ignore[misc]
    if isinstance(document, list):
        return [comparable(v) for v in document]  # type: ignore[return-value]
    return document


@pytest.mark.parametrize("repo", [APPROVE_REPO, REJECT_REPO])
def test_a_vet_in_a_child_process_reports_what_a_vet_in_the_server_does(world: World, repo: str) -> None:
    job = world.job(repo)
    store = open_store(world.settings)
    try:
        here = vet_remote(repo, settings=world.settings, revision=job.sha, policy_path=world.settings.policy,
                          store=store)
    finally:
        store.close()
    there = world.vets(job)
    assert there.verdict == here.verdict
    assert there.stats.files == here.stats.files and there.stats.repo_bytes == here.stats.repo_bytes
    assert comparable(report_json.dump(there)) == comparable(report_json.dump(here))


def test_vet_processes_run_at_the_configured_lower_priority(world: World) -> None:
    world.vets(world.job(APPROVE_REPO))
    [pid] = world.vets.pids()
    assert pid != os.getpid()
    assert psutil.Process(pid).nice() == os.nice(0) + 7


def test_an_error_in_the_child_comes_back_named_and_nothing_else_breaks(world: World) -> None:
    with pytest.raises(VetProcessError, match=r"^\w+: .*"):  # "ErrorName: message" from the child
        world.vets(world.job(APPROVE_REPO, sha="0" * 40))  # no such commit on the hub
    assert world.vets(world.job(APPROVE_REPO)).verdict.value == "approve"


def test_a_child_killed_mid_vet_fails_that_vet_and_the_next_gets_a_new_process(world: World) -> None:
    world.vets(world.job(APPROVE_REPO))  # a warm child
    [first] = world.vets.pids()
    outcome: list[BaseException | str] = []

    def vet() -> None:
        try:
            outcome.append(world.vets(world.job(APPROVE_REPO)).verdict.value)
        except BaseException as exc:  # noqa: BLE001 - the test looks at it below
            outcome.append(exc)

    world.hub.delay = 0.5  # every file read waits: the vet is still running when the child is killed
    try:
        vetting = threading.Thread(target=vet)
        vetting.start()
        _wait_for_reads(world.hub, at_least=world.hub.file_reads + 1)
        os.kill(first, signal.SIGKILL)
        vetting.join(60)
    finally:
        world.hub.delay = 0.0
    [failure] = outcome
    assert isinstance(failure, VetProcessError) and "died" in str(failure)
    assert world.vets(world.job(APPROVE_REPO)).verdict.value == "approve"
    assert world.vets.pids() != [first]


def test_a_child_that_died_while_idle_does_not_fail_the_next_vet(world: World) -> None:
    world.vets(world.job(APPROVE_REPO))
    [idle] = world.vets.pids()
    os.kill(idle, signal.SIGKILL)
    time.sleep(0.5)  # the pool notices the death and marks itself broken
    assert world.vets(world.job(APPROVE_REPO)).verdict.value == "approve"


def _wait_for_reads(hub: SlowHub, at_least: int) -> None:
    deadline = time.monotonic() + 30
    while hub.file_reads < at_least:
        assert time.monotonic() < deadline, "the vet never read a file"
        time.sleep(0.02)


def test_the_module_entry_point_does_not_run_the_command_line_when_imported() -> None:
    # A spawned child imports `python -m app`'s main module as __mp_main__: that must not start a CLI.
    code = "import runpy; runpy.run_module('app', run_name='__mp_main__')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[2])
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_server_killed_outright_leaves_no_vet_process_behind(world: World, tmp_path: Path) -> None:
    store_url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(store_url)
    server = LiveServer(server_env(world.settings.hf_endpoint, store_url, tmp_path), tmp_path / "serve.log")
    server.start()
    try:
        vetter = create_token(store_url, "vetter", "vetter")
        answer = httpx.post(f"{server.url}/vet", params={"repo": APPROVE_REPO, "wait": 120}, timeout=180,
                            headers={"Authorization": f"Bearer {vetter}"})
        assert answer.status_code == 200, answer.text
        assert server.proc is not None
        children = [c for c in psutil.Process(server.proc.pid).children() if "spawn_main" in " ".join(c.cmdline())]
        assert len(children) == 1  # the vet ran in a child process of the server
    finally:
        server.kill()
    _, alive = psutil.wait_procs(children, timeout=10)
    assert alive == []
