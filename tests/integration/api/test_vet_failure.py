"""A vet that fails within `wait` is a 502 with the job, never a 2xx a deploy script could read as success."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.db import tokens
from app.db.session import Store
from app.server import create_app
from app.settings import Settings

SHA = "a" * 40


def test_a_failed_vet_within_wait_is_502_with_the_job(store: Store) -> None:
    with store.session() as session:
        secret = tokens.create(session, "ci", "vetter", actor="test")
    # The commit resolves, then the hub is unreachable for the vet itself: the job fails.
    settings = Settings(database_url=store.url, hf_endpoint="http://127.0.0.1:9")
    with TestClient(create_app(settings, resolve=lambda repo, rev: SHA)) as client:
        answer = client.post("/vet", params={"repo": "nvidia/tiny", "wait": 120},
                             headers={"Authorization": f"Bearer {secret}"})
        body = answer.json()
        assert answer.status_code == 502, body
        assert body["error"]["code"] == "vet-failed"
        assert body["error"]["job"]["status"] == "failed" and body["error"]["job"]["revision"] == SHA
        gate = client.get("/gate", params={"repo": "nvidia/tiny", "revision": SHA})
        assert gate.status_code == 404  # nothing was stored: not vetted, certainly not approved
