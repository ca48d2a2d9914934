"""issue 25: a re-vet keeps a reviewer's approval unless it finds something new or the policy verdict changes,
and a replayed webhook queues nothing. Real huggingface_hub over HTTP against the fixture hub; the API in process."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.core import report_json
from app.core.findings import Finding, Severity
from app.db import tokens
from app.db.models import VetRow
from app.db.repository import report_by_id, save_report
from app.server import create_app
from app.settings import Settings
from tests.integration.api.inprocess import WEBHOOK_SECRET, app_state
from tests.integration.vetted import APPROVE_REPO, REVIEW_REPO


def token(client: TestClient, role: str) -> dict[str, str]:
    with app_state(client).store.session() as session:
        secret = tokens.create(session, f"{role}-1", role, actor="test")
    return {"Authorization": f"Bearer {secret}"}


def vet(client: TestClient, repo: str, who: dict[str, str]) -> dict[str, Any]:
    response = client.post("/vet", params={"repo": repo, "wait": 120}, headers=who)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def report_id(client: TestClient, vetted: dict[str, Any]) -> int:
    job = app_state(client).jobs.get(vetted["job"]["id"])
    assert job is not None and job.report_id is not None
    return job.report_id


def gate(client: TestClient, repo: str, sha: str) -> tuple[int, dict[str, Any]]:
    response = client.get("/gate", params={"repo": repo, "revision": sha})
    return response.status_code, response.json()


def approve(client: TestClient, sha: str, who: dict[str, str]) -> Any:
    body = {"repo": REVIEW_REPO, "revision": sha, "decision": "approve", "reason": "read the auto_map code"}
    return client.post("/reviews", json=body, headers=who)


def store_with_a_new_finding(client: TestClient, report_id: int) -> None:
    """What a re-vet by a newer scanner that finds one more thing at the same commit stores."""
    with app_state(client).store.session() as session:
        stored = report_by_id(session, report_id)
        assert stored is not None
        report = report_json.load(stored.document)
        extra = Finding("modeling_custom.py", "python-code", "rule-new", Severity.MEDIUM, "opens a socket",
                        evidence="line 7")
        save_report(session, dataclasses.replace(report, findings=(*report.findings, extra)),
                    requested_revision="main", actor="test")


def test_a_re_vet_of_the_same_bytes_keeps_the_reviewers_approval(api: TestClient) -> None:
    vetter, reviewer = token(api, "vetter"), token(api, "reviewer")
    first = vet(api, REVIEW_REPO, vetter)
    sha = first["job"]["revision"]
    assert first["report"]["verdict"] == "review" and gate(api, REVIEW_REPO, sha)[0] == 403
    assert approve(api, sha, reviewer).status_code == 201

    again = vet(api, REVIEW_REPO, vetter)  # a vetter's re-vet: a new job, a new report of the same bytes
    assert report_id(api, again) != report_id(api, first)
    status, doc = gate(api, REVIEW_REPO, sha)
    assert status == 200, doc  # before issue 25: 403, the approval silently withdrawn
    assert doc["decided_by"] == "token:reviewer-1 (reviewer)"
    assert approve(api, sha, reviewer).status_code == 409  # still approved: nothing to approve again


def test_a_re_vet_that_finds_something_new_withdraws_the_approval_and_says_what(api: TestClient) -> None:
    vetter, reviewer = token(api, "vetter"), token(api, "reviewer")
    first = vet(api, REVIEW_REPO, vetter)
    sha = first["job"]["revision"]
    assert approve(api, sha, reviewer).status_code == 201
    store_with_a_new_finding(api, report_id(api, first))
    status, doc = gate(api, REVIEW_REPO, sha)
    assert status == 403 and doc["verdict"] == "review"
    reason = doc["reasons"][0]
    assert reason.startswith(f"the review of report {report_id(api, first)} no longer applies: "
                             "the re-vet found 1 new finding: rule-new (medium) in modeling_custom.py"), reason
    assert approve(api, sha, reviewer).status_code == 201  # a new review of what is new settles it
    assert gate(api, REVIEW_REPO, sha)[0] == 200


def test_a_stricter_policy_verdict_withdraws_the_approval_and_says_so(
    api: TestClient, example_hub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vetter, reviewer = token(api, "vetter"), token(api, "reviewer")
    first = vet(api, REVIEW_REPO, vetter)
    sha = first["job"]["revision"]
    assert approve(api, sha, reviewer).status_code == 201
    monkeypatch.setenv("HFVET_POLICY", "strict")  # rejects auto_map: the same findings now mean reject
    with TestClient(create_app(Settings())) as strict:
        vet(strict, REVIEW_REPO, vetter)
        status, doc = gate(strict, REVIEW_REPO, sha)
    assert status == 403 and doc["verdict"] == "reject"
    assert doc["reasons"][0].startswith(f"the review of report {report_id(api, first)} no longer applies: "
                                        "the policy verdict changed from review to reject"), doc["reasons"]


def push(client: TestClient, old: str, new: str, webhook: str = "w1") -> Any:
    body = {"event": {"action": "update", "scope": "repo.content"},
            "repo": {"type": "model", "name": APPROVE_REPO, "headSha": new},
            "updatedRefs": [{"ref": "refs/heads/main", "oldSha": old, "newSha": new}],
            "webhook": {"id": webhook, "version": 3}}
    return client.post("/webhooks/huggingface", json=body, headers={"X-Webhook-Secret": WEBHOOK_SECRET})


def vet_rows(client: TestClient) -> int:
    with app_state(client).store.session() as session:
        return int(session.execute(select(func.count()).select_from(VetRow)).scalar_one())


def test_a_replayed_webhook_queues_no_new_vet(api: TestClient) -> None:
    sha = app_state(api).resolve(APPROVE_REPO, "main")
    first = push(api, "1" * 40, sha)
    assert first.status_code == 202
    [job] = first.json()["queued"]
    finished = app_state(api).jobs.wait(job["id"], 120)
    assert finished is not None and finished.status == "done"

    replay = push(api, "1" * 40, sha)  # the same delivery again, after its vet finished
    assert replay.status_code == 200, replay.text
    assert replay.json() == {"queued": [], "ignored": [{"ref": "refs/heads/main", "reason": "replayed delivery"}]}
    other = push(api, "1" * 40, sha, webhook="w2")  # another webhook announcing the head already vetted
    assert other.status_code == 200 and other.json()["queued"] == []
    assert "already vetted under the active policy" in other.json()["ignored"][0]["reason"]
    assert vet_rows(api) == 1
