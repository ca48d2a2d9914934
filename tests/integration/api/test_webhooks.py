"""POST /webhooks/huggingface: the secret, the payload's bounds, and what gets queued (nothing, when refused)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.api.routes.webhooks import MAX_BODY
from app.db.models import AuditRow, VetRow
from app.server import create_app
from app.settings import Settings

SECRET = "correct-horse-battery-staple"
REPO = "nvidia/DeepSeek-V4-Flash-NVFP4"
OLD, NEW = "1" * 40, "2" * 40


def payload(*refs: dict[str, Any], repo: str = REPO, kind: str = "model") -> dict[str, Any]:
    """A Hub webhook (v3) for a push, with the fields the Hub sends beside the ones hfvet reads."""
    return {
        "event": {"action": "update", "scope": "repo.content"},
        "repo": {"type": kind, "name": repo, "id": "6571", "private": False, "headSha": NEW,
                 "owner": {"id": "abc"}, "url": {"web": f"https://huggingface.co/{repo}"}},
        "webhook": {"id": "w1", "version": 3},
        "updatedRefs": list(refs) or [ref("refs/heads/main")],
    }


def ref(name: str, new: str | None = NEW, old: str | None = OLD) -> dict[str, Any]:
    return {"ref": name, "oldSha": old, "newSha": new}


def client_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret: str | None) -> TestClient:
    monkeypatch.setenv("HFVET_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    if secret is not None:
        monkeypatch.setenv("HFVET_WEBHOOK_SECRET", secret)
    return TestClient(create_app(Settings()))


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    # No hub behind it (the tests' HF_ENDPOINT refuses connections): a queued job fails, never approves.
    with client_for(tmp_path, monkeypatch, SECRET) as client:
        yield client


def post(client: TestClient, body: Any, secret: str | None = SECRET, **kwargs: Any) -> Any:
    headers = {"content-type": "application/json"} | ({"X-Webhook-Secret": secret} if secret is not None else {})
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post("/webhooks/huggingface", content=content, headers=headers, **kwargs)


def vets(client: TestClient) -> list[VetRow]:
    with client.app.state.hfvet.store.session() as session:  # type: ignore[attr-defined]
        return list(session.execute(select(VetRow).order_by(VetRow.created_at)).scalars())


def error(response: Any) -> str:
    return str(response.json()["error"]["code"])


def test_a_push_to_main_queues_a_vet_of_the_new_commit(client: TestClient) -> None:
    response = post(client, payload())
    assert response.status_code == 202
    [job] = response.json()["queued"]
    assert (job["repo"], job["requested_revision"], job["revision"]) == (REPO, "main", NEW)
    assert job["requested_by"] == "webhook"
    [row] = vets(client)
    assert (row.repo_id, row.sha, row.requested_revision) == (REPO, NEW, "main")
    with client.app.state.hfvet.store.session() as session:  # type: ignore[attr-defined]
        audit = session.execute(select(AuditRow).where(AuditRow.action == "vet-requested")).scalar_one()
    assert audit.actor == "webhook" and NEW in audit.subject


def test_a_branch_and_a_tag_each_queue_their_commit_and_a_redelivery_queues_nothing(client: TestClient) -> None:
    client.app.state.hfvet.jobs.stop()  # type: ignore[attr-defined]  # keep the jobs queued while we look
    body = payload(ref("refs/heads/dev", NEW), ref("refs/tags/v1.0", "3" * 40))
    first = post(client, body).json()["queued"]
    assert [(j["requested_revision"], j["revision"]) for j in first] == [("dev", NEW), ("v1.0", "3" * 40)]
    again = post(client, body)  # the Hub redelivers (or someone replays it): nothing more to do
    assert again.status_code == 200
    assert again.json() == {"queued": [], "ignored": [{"ref": "refs/heads/dev", "reason": "replayed delivery"},
                                                      {"ref": "refs/tags/v1.0", "reason": "replayed delivery"}]}
    other = post(client, body | {"webhook": {"id": "w2", "version": 3}})  # another webhook, the same heads
    assert [j["id"] for j in other.json()["queued"]] == [j["id"] for j in first]  # joined: still one job each
    assert len(vets(client)) == 2


def test_a_replay_of_a_delivery_whose_vet_failed_queues_nothing_but_a_new_push_does(client: TestClient) -> None:
    [job] = post(client, payload()).json()["queued"]
    finished = client.app.state.hfvet.jobs.wait(job["id"], 60)  # type: ignore[attr-defined]
    assert finished is not None and finished.status == "failed"  # no hub behind this server
    assert post(client, payload()).json()["ignored"] == [{"ref": "refs/heads/main", "reason": "replayed delivery"}]
    assert len(vets(client)) == 1  # before issue 25: each replay queued a whole new vet
    moved_again = post(client, payload(ref("refs/heads/main", NEW, old="4" * 40)))  # a new push to the same head
    assert moved_again.status_code == 202 and len(vets(client)) == 2


def test_remembered_deliveries_are_bounded_by_age_and_count(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime, timedelta

    from app.db.models import WebhookDeliveryRow
    from app.services import webhooks

    client.app.state.hfvet.jobs.stop()  # type: ignore[attr-defined]
    store = client.app.state.hfvet.store  # type: ignore[attr-defined]
    with store.session() as session:
        session.add(WebhookDeliveryRow(key_digest="0" * 64, repo_id=REPO, ref="refs/heads/main", new_sha=NEW,
                                       received_at=datetime.now(UTC) - webhooks.RETENTION - timedelta(hours=1)))
    monkeypatch.setattr(webhooks, "MAX_REMEMBERED", 3)
    for i in range(5):
        assert post(client, payload(ref(f"refs/heads/b{i}", f"{i + 5}" * 40))).status_code == 202
    with store.session() as session:
        kept = set(session.execute(select(WebhookDeliveryRow.ref)).scalars())
    assert kept == {"refs/heads/b2", "refs/heads/b3", "refs/heads/b4"}


@pytest.mark.parametrize("secret", [None, "", "wrong", SECRET[:-1], SECRET + "x", SECRET.upper()])
def test_a_missing_or_wrong_secret_is_401_and_queues_nothing(client: TestClient, secret: str | None) -> None:
    response = post(client, payload(), secret=secret)
    assert response.status_code == 401
    assert error(response) in ("webhook-secret-missing", "bad-webhook-secret")
    assert "X-Webhook-Secret" in response.json()["error"]["message"]
    assert vets(client) == []


def test_without_a_configured_secret_webhooks_are_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with client_for(tmp_path, monkeypatch, secret=None) as client:
        for sent in (None, "", "anything"):
            response = post(client, payload(), secret=sent)
            assert response.status_code == 404 and error(response) == "webhooks-disabled"
            assert "HFVET_WEBHOOK_SECRET" in response.json()["error"]["message"]
        assert vets(client) == []


def test_a_deleted_ref_queues_nothing(client: TestClient) -> None:
    for deleted in ("0" * 40, None):
        response = post(client, payload(ref("refs/heads/old-branch", new=deleted)))
        assert response.status_code == 200
        assert response.json() == {"queued": [], "ignored": [{"ref": "refs/heads/old-branch",
                                                              "reason": "the ref was deleted"}]}
    assert vets(client) == []


def test_pull_request_refs_and_refless_events_queue_nothing(client: TestClient) -> None:
    response = post(client, payload(ref("refs/pr/7"), ref("refs/convert/parquet")))
    assert response.status_code == 200 and len(response.json()["ignored"]) == 2
    refless = payload() | {"updatedRefs": []}
    assert post(client, refless).json()["ignored"] == [{"ref": "*", "reason": "the event updates no refs"}]
    assert vets(client) == []


@pytest.mark.parametrize("kind", ["dataset", "space"])
def test_a_non_model_repo_queues_nothing(client: TestClient, kind: str) -> None:
    response = post(client, payload(kind=kind))
    assert response.status_code == 200 and response.json()["queued"] == []
    assert "only models" in response.json()["ignored"][0]["reason"]
    assert vets(client) == []


def test_an_oversized_body_is_413_whether_declared_or_streamed(client: TestClient) -> None:
    big = payload() | {"padding": "x" * MAX_BODY}
    assert post(client, big).status_code == 413
    chunks = iter([json.dumps(big).encode()[i:i + 4096] for i in range(0, MAX_BODY + 8192, 4096)])
    streamed = client.post("/webhooks/huggingface", content=chunks, headers={"X-Webhook-Secret": SECRET})
    assert streamed.status_code == 413 and error(streamed) == "body-too-large"
    assert vets(client) == []


@pytest.mark.parametrize(("body", "status", "code"), [
    (b"{not json", 400, "invalid-json"),
    (b"\xff\xfe", 400, "invalid-json"),
    (b"", 400, "invalid-json"),
    (b"[]", 422, "invalid-webhook-payload"),
    (json.dumps({"event": {"action": "update", "scope": "repo"}}).encode(), 422, "invalid-webhook-payload"),
    (json.dumps(payload() | {"updatedRefs": "main"}).encode(), 422, "invalid-webhook-payload"),
    (json.dumps(payload() | {"updatedRefs": [ref("refs/heads/main")] * 101}).encode(), 422, "invalid-webhook-payload"),
    (json.dumps(payload(repo="../../etc/passwd")).encode(), 422, "invalid-repo"),
    (json.dumps(payload(repo="no-org")).encode(), 422, "invalid-repo"),
    (json.dumps(payload(ref("refs/heads/main", new="HEAD"))).encode(), 422, "invalid-sha"),
    (json.dumps(payload(ref("refs/heads/main", new="A" * 40))).encode(), 422, "invalid-sha"),
    (json.dumps(payload(ref("refs/heads/../../x"))).encode(), 422, "invalid-revision"),
])
def test_a_malformed_payload_is_a_clear_4xx_and_queues_nothing(
    client: TestClient, body: bytes, status: int, code: str
) -> None:
    response = post(client, body)
    assert (response.status_code, error(response)) == (status, code)
    assert response.json()["error"]["message"]
    assert vets(client) == []


def test_one_bad_ref_among_good_ones_queues_nothing(client: TestClient) -> None:
    response = post(client, payload(ref("refs/heads/main"), ref("refs/heads/dev", new="not-a-sha")))
    assert response.status_code == 422 and error(response) == "invalid-sha"
    assert vets(client) == []


def test_a_store_fault_on_the_second_ref_queues_not_even_the_first(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy.exc import OperationalError

    from app.jobs import inprocess

    real = inprocess.rows.create_or_join
    calls: list[str] = []

    def second_fails(session: Any, repo: str, revision: str, *args: Any) -> Any:
        calls.append(revision)
        if len(calls) == 2:
            raise OperationalError("INSERT INTO vets", {}, Exception("disk I/O error"))
        return real(session, repo, revision, *args)

    monkeypatch.setattr(inprocess.rows, "create_or_join", second_fails)
    response = post(client, payload(ref("refs/heads/main", NEW), ref("refs/tags/v1.0", "3" * 40)))
    assert (response.status_code, error(response)) == (503, "unavailable")
    assert "nothing was queued" in response.json()["error"]["message"]
    assert calls == ["main", "v1.0"]
    assert vets(client) == []
    with client.app.state.hfvet.store.session() as session:  # type: ignore[attr-defined]
        assert session.execute(select(AuditRow)).scalars().all() == []
    monkeypatch.setattr(inprocess.rows, "create_or_join", real)
    retried = post(client, payload(ref("refs/heads/main", NEW), ref("refs/tags/v1.0", "3" * 40)))
    assert retried.status_code == 202 and len(retried.json()["queued"]) == 2  # a refused delivery is not a replay
