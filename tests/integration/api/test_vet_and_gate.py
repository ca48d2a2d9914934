"""The service as a deploy pipeline uses it: POST /vet the demo repos, then GET /gate, over HTTP."""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from tests.integration.api.conftest import Hub, Live
from tests.integration.api.live import row_counts

NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"
CANADA = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"
NEMOTRON = "nvidia/Nemotron-Mini-Custom-Code"


def vet(live: Live, repo: str, wait: float = 60) -> httpx.Response:
    return httpx.post(f"{live.url}/vet", params={"repo": repo, "wait": wait}, headers=live.auth("vetter"),
                      timeout=wait + 30)


def test_vendor_repo_is_approved_and_the_gate_answers_200_with_its_commit(live: Live) -> None:
    answer = vet(live, NVIDIA)
    assert answer.status_code == 200, answer.text
    job, report = answer.json()["job"], answer.json()["report"]
    assert job["status"] == "done" and re.fullmatch(r"[0-9a-f]{40}", job["revision"])
    assert report["verdict"] == "approve" and report["revision"] == job["revision"]
    assert job["requested_by"] == "token:vetter-token" and job["attempts"] == 1

    gate = httpx.get(f"{live.url}/gate", params={"repo": NVIDIA})
    assert gate.status_code == 200, gate.text
    doc = gate.json()
    assert doc["approved"] is True and doc["revision"] == job["revision"]
    assert {f["path"] for f in doc["files"]} >= {"config.json", "model.safetensors.index.json"}
    assert job["revision"] in doc["pins"]["vllm"]
    exact = httpx.get(f"{live.url}/gate", params={"repo": NVIDIA, "revision": job["revision"]})
    assert exact.status_code == 200 and exact.json()["revision"] == job["revision"]


def test_third_party_repo_is_rejected_and_the_gate_answers_403_with_reasons(live: Live) -> None:
    answer = vet(live, CANADA)
    assert answer.status_code == 200, answer.text
    assert answer.json()["report"]["verdict"] == "reject"
    gate = httpx.get(f"{live.url}/gate", params={"repo": CANADA, "revision": "main"})
    assert gate.status_code == 403, gate.text
    doc = gate.json()
    assert doc["approved"] is False and doc["verdict"] == "reject" and doc["status"] == "denied"
    assert doc["reasons"] and "files" not in doc  # a refusal names no files to pull


def wait_done(live: Live, job_id: str, timeout: float = 60) -> dict[str, Any]:
    """GET /vet/{id} until the job has finished."""
    deadline = time.monotonic() + timeout
    while True:
        doc: dict[str, Any] = httpx.get(f"{live.url}/vet/{job_id}").json()
        if doc["job"]["status"] in ("done", "failed") or time.monotonic() > deadline:
            return doc
        time.sleep(0.1)


def test_get_vet_returns_the_job_and_its_report(live: Live) -> None:
    queued = httpx.post(f"{live.url}/vet", params={"repo": NVIDIA}, headers=live.auth("admin"))
    assert queued.status_code in (200, 202), queued.text  # 202 unless it finished at once
    job = queued.json()["job"]
    assert job["links"]["self"] == f"/vet/{job['id']}"
    assert job["links"]["gate"] == f"/gate?repo={NVIDIA}&revision={job['revision']}"
    doc = wait_done(live, job["id"])
    assert doc["job"]["id"] == job["id"] and doc["job"]["status"] == "done"
    assert doc["job"]["requested_by"] == "token:admin-token"
    assert doc["report"]["verdict"] == "approve" and doc["report"]["revision"] == job["revision"]


def test_twenty_concurrent_posts_for_one_repo_make_one_job(live: Live, slow_hub: Hub) -> None:
    slow_hub.app.delay = 0.3  # the vet outlasts the burst, so every request finds it active
    before = row_counts(live.store_url)

    def post(_: int) -> httpx.Response:
        return httpx.post(f"{live.url}/vet", params={"repo": NEMOTRON}, headers=live.auth("vetter"), timeout=60)

    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(post, range(20)))
    assert [a.status_code for a in answers] == [202] * 20, [a.text for a in answers if a.status_code != 202]
    ids = {a.json()["job"]["id"] for a in answers}
    assert len(ids) == 1
    slow_hub.app.delay = 0.0
    assert wait_done(live, ids.pop())["job"]["status"] == "done"
    after = row_counts(live.store_url)
    assert after["vets"] - before["vets"] == 1
    assert after["reports"] - before["reports"] == 1


def test_healthz_answers_ok(live: Live) -> None:
    answer = httpx.get(f"{live.url}/healthz")
    assert answer.status_code == 200 and answer.json() == {"status": "ok"}


def test_policy_names_the_active_policy(live: Live) -> None:
    doc = httpx.get(f"{live.url}/policy").json()
    assert doc["name"] == "default" and re.fullmatch(r"[0-9a-f]{64}", doc["sha256"])
    assert "rules" in (doc["text"] or "")
