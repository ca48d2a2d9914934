"""POST /vet?with_references=1 over HTTP: the referenced repos' vets are queued, and approving the base
model flips the adapter's gate answer with no re-vet of the adapter."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from app.examples.safetensors_writer import TensorSpec, write_safetensors
from tests.integration.api.conftest import Hub, Live

ADAPTER = "nvidia/Tiny-LoRA-Api"
BASE = "tinyco/tiny-base-api"  # a third party: `review` until a reviewer approves it
GHOST = "ghostorg/not-on-the-hub"  # named by the card: no commit to vet


def add_repos(hub: Hub) -> None:
    """Two more repos on the session's fixture hub (new names: the other tests do not see them)."""
    adapter, base = hub.root / ADAPTER, hub.root / BASE
    if adapter.exists():
        return  # the module runs once per backend
    adapter.mkdir(parents=True)
    (adapter / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "base_model_name_or_path": BASE}))
    (adapter / "README.md").write_text(f"```python\nAutoModel.from_pretrained(\"{GHOST}\")\n```\n")
    write_safetensors(adapter / "adapter_model.safetensors", [TensorSpec("lora_A.weight", "F16", (8, 16))])
    base.mkdir(parents=True)
    (base / "config.json").write_text(json.dumps({"model_type": "llama"}))
    write_safetensors(base / "model.safetensors", [TensorSpec("embed.weight", "F16", (16, 16))])


def post_vet(live: Live, repo: str, wait: float) -> dict[str, Any]:
    answer = httpx.post(f"{live.url}/vet", params={"repo": repo, "wait": wait, "with_references": 1},
                        headers=live.auth("vetter"), timeout=wait + 30)
    assert answer.status_code in (200, 202), answer.text
    return dict(answer.json())


def finished(live: Live, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        body = httpx.get(f"{live.url}/vet/{job_id}", headers=live.auth("reader"), timeout=30).json()
        if body["job"]["status"] in ("done", "failed"):
            return dict(body)
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not finish")


def gate(live: Live, repo: str, sha: str) -> httpx.Response:
    return httpx.get(f"{live.url}/gate", params={"repo": repo, "revision": sha}, timeout=30)


def test_with_references_queues_the_base_and_its_approval_flips_the_adapter(live: Live, hub: Hub) -> None:
    add_repos(hub)
    first = post_vet(live, ADAPTER, wait=0)
    if first["job"]["status"] != "done":  # no report of this commit yet: nothing can be read from it
        assert first["references"] == {"jobs": [], "unresolved": [], "pending": True}
        finished(live, first["job"]["id"])

    body = post_vet(live, ADAPTER, wait=60)  # a report of the commit exists now
    assert body["report"]["verdict"] == "review"
    refs = body["references"]
    assert refs["pending"] is False
    assert [(j["repo"], j["requested_revision"]) for j in refs["jobs"]] == [(BASE, "main")]
    assert [(u["repo"], u["revision"]) for u in refs["unresolved"]] == [(GHOST, "main")]
    sha = body["job"]["revision"]
    assert gate(live, ADAPTER, sha).status_code == 403

    base = finished(live, refs["jobs"][0]["id"])
    assert base["report"]["verdict"] == "review"
    review = httpx.post(f"{live.url}/reviews", headers=live.auth("reviewer"), timeout=30,
                        json={"repo": BASE, "revision": base["job"]["revision"], "decision": "approve",
                              "reason": "read the base"})
    assert review.status_code == 201, review.text

    after = gate(live, ADAPTER, sha)
    assert after.status_code == 200, after.text
    assert after.json()["revision"] == sha and after.json()["approved"] is True


def test_without_with_references_nothing_else_is_queued(live: Live, hub: Hub) -> None:
    add_repos(hub)
    answer = httpx.post(f"{live.url}/vet", params={"repo": ADAPTER, "wait": 60}, headers=live.auth("vetter"),
                        timeout=90)
    assert answer.status_code == 200 and answer.json()["references"] is None
