"""A small hfvet cluster on this machine: one PostgreSQL database, the fixture hub, an API process
(HFVET_QUEUE=procrastinate) and `hfvet worker` processes — the compose stack without Docker."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from app.examples import build_example
from tests.integration.api.live import ROOT, LiveServer, kill_now, server_env, stop_gently

TEMPLATE = "nvidia/DeepSeek-V4-Flash-NVFP4"  # approved by the default policy
FAST_HEARTBEAT = "1"  # seconds: a killed worker's jobs move on after 3 s instead of 30


FLEET_FILES = ("config.json", "README.md", "model-00003-of-00003.safetensors")  # small, so vets are quick


def build_fleet(root: Path, count: int) -> list[str]:
    """``count`` small repos on the hub, each three files of the vendor example under its own name."""
    build_example(root, TEMPLATE)
    names = [f"nvidia/fleet-{i:03d}" for i in range(count)]
    for name in names:
        (root / name).mkdir(parents=True)
        for file in FLEET_FILES:
            shutil.copy(root / TEMPLATE / file, root / name / file)
    return names


def cluster_env(hub_url: str, store_url: str, home: Path, **extra: str) -> dict[str, str]:
    return server_env(hub_url, store_url, home, HFVET_QUEUE="procrastinate", HFVET_HUB_WORKERS="2",
                      HFVET_WORKER_HEARTBEAT_SECONDS=FAST_HEARTBEAT, **extra)


@dataclass
class Worker:
    """`python -m app worker` as a child process."""

    env: dict[str, str]
    log: Path
    concurrency: int = 2
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Worker:
        with self.log.open("ab") as out:
            command = [sys.executable, "-m", "app", "worker", "--concurrency", str(self.concurrency)]
            self.proc = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs, the job it holds stays `doing`."""
        if self.proc is not None:
            kill_now(self.proc)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            stop_gently(self.proc, grace=20)
            self.proc = None


@dataclass
class Cluster:
    api: LiveServer
    workers: list[Worker] = field(default_factory=list)
    url: str = ""

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.api.stop()


def vet(url: str, token: str, repo: str) -> str:
    answer = httpx.post(f"{url}/vet", params={"repo": repo}, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert answer.status_code in (200, 202), answer.text
    return str(answer.json()["job"]["id"])


def wait_all(url: str, job_ids: list[str], timeout: float) -> dict[str, dict[str, object]]:
    """Every job once finished; fails the test if any is still queued or running after ``timeout``."""
    deadline = time.monotonic() + timeout
    done: dict[str, dict[str, object]] = {}
    with httpx.Client(base_url=url, timeout=10) as client:
        while len(done) < len(job_ids):
            for job_id in job_ids:
                if job_id not in done:
                    job = client.get(f"/vet/{job_id}").json()["job"]
                    if job["status"] in ("done", "failed"):
                        done[job_id] = job
            if len(done) < len(job_ids):
                assert time.monotonic() < deadline, f"{len(job_ids) - len(done)} jobs unfinished after {timeout}s"
                time.sleep(0.25)
    return done


OPEN_VET_JOBS = ("SELECT count(*) FROM procrastinate.procrastinate_jobs WHERE task_name = 'hfvet.vet' "
                 "AND status IN ('todo', 'doing') AND args->>'repo' = ANY(:r)")


def wait_jobs_closed(store_url: str, repos: list[str], timeout: float) -> None:
    """Until procrastinate has closed every vet job of ``repos``. A worker commits the vet row `done` inside
    the task and procrastinate marks the job only after the task returns: a job whose vet is done can still
    be `doing` for a moment, longer on a loaded machine."""
    deadline = time.monotonic() + timeout
    while (still := scalar(store_url, OPEN_VET_JOBS, r=repos)) > 0:
        assert time.monotonic() < deadline, f"{still} procrastinate jobs still open after {timeout}s"
        time.sleep(0.1)


def scalar(store_url: str, sql: str, **params: object) -> int:
    engine = create_engine(store_url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text(sql), params).scalar_one())
    finally:
        engine.dispose()


def reports_by_repo(store_url: str) -> dict[str, int]:
    """Stored reports per repo (exactly once: 1 for every repo vetted once)."""
    engine = create_engine(store_url)
    query = text("SELECT p.repo_id, count(*) FROM reports r JOIN revisions rv ON r.revision_pk = rv.id "
                 "JOIN repos p ON rv.repo_pk = p.id GROUP BY p.repo_id")
    try:
        with engine.connect() as conn:
            return {repo: int(n) for repo, n in conn.execute(query)}
    finally:
        engine.dispose()
