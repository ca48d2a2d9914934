"""A server killed with SIGKILL in the middle of a vet resumes the job after a restart: one job, one report."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from tests.integration.api.conftest import Hub, prepare_store
from tests.integration.api.live import LiveServer, server_env

NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"


def poll(url: str, job_id: str, until: tuple[str, ...], timeout: float = 60) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while True:
        job: dict[str, object] = httpx.get(f"{url}/vet/{job_id}").json()["job"]
        if job["status"] in until:
            return job
        assert time.monotonic() < deadline, f"job still {job['status']} after {timeout}s"
        time.sleep(0.05)


def reports_of(store_url: str, repo: str) -> int:
    engine = create_engine(store_url)
    try:
        with engine.connect() as conn:
            query = text("SELECT count(*) FROM reports r JOIN revisions v ON r.revision_pk = v.id "
                         "JOIN repos p ON v.repo_pk = p.id WHERE p.repo_id = :repo")
            return int(conn.execute(query, {"repo": repo}).scalar_one())
    finally:
        engine.dispose()


def test_a_job_killed_mid_vet_completes_after_restart_with_one_report(
    slow_hub: Hub, backend: str, tmp_path: Path
) -> None:
    tokens = prepare_store(backend)
    server = LiveServer(server_env(slow_hub.url, backend, tmp_path, HFVET_HUB_WORKERS="1"), tmp_path / "serve.log")
    slow_hub.app.delay = 0.5  # one file read at a time, each held back: the vet takes seconds
    url = server.start()
    try:
        reads_before = slow_hub.app.file_reads
        queued = httpx.post(f"{url}/vet", params={"repo": NVIDIA},
                            headers={"Authorization": f"Bearer {tokens['vetter']}"})
        assert queued.status_code == 202, queued.text
        job_id = queued.json()["job"]["id"]
        assert poll(url, job_id, ("running",))["attempts"] == 1
        while slow_hub.app.file_reads == reads_before:  # the vet is reading the repo now
            time.sleep(0.05)
        server.kill()
        assert reports_of(backend, NVIDIA) == 0  # killed before it could finish

        slow_hub.app.delay = 0.0
        url = server.start()  # same store: the interrupted job is requeued on start
        job = poll(url, job_id, ("done", "failed"))
        assert job["status"] == "done" and job["attempts"] == 2 and job["error"] is None
        doc = httpx.get(f"{url}/vet/{job_id}").json()
        assert doc["report"]["verdict"] == "approve"
        assert reports_of(backend, NVIDIA) == 1
        assert httpx.get(f"{url}/gate", params={"repo": NVIDIA}).status_code == 200
    finally:
        server.stop()
