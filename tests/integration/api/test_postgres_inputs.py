"""Inputs PostgreSQL refuses that SQLite takes (a NUL character in text): a clear 4xx, never a 5xx."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.db import tokens
from app.db.session import Store, upgrade
from app.server import create_app
from app.settings import Settings
from tests.integration.api.stored import policy, report, save
from tests.integration.db.conftest import postgres_url

SHA = "a" * 40
pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[TestClient, str]]:
    for url in postgres_url():
        upgrade(url)
        store = Store(url)
        save(store, report("nvidia/model", SHA, under=policy("default")))  # approved: a reject is a veto
        with store.session() as session:
            secret = tokens.create(session, "alice", "reviewer", actor="test")
        store.close()
        with TestClient(create_app(Settings(database_url=url))) as client:
            yield client, secret


def test_a_job_id_with_a_nul_is_not_found(served: tuple[TestClient, str]) -> None:
    client, _ = served
    answer = client.get("/vet/ab%00cd")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "job-not-found"


def test_a_cursor_naming_a_repo_with_a_nul_is_refused(served: tuple[TestClient, str]) -> None:
    client, _ = served
    cursor = base64.urlsafe_b64encode(b"nvidia/\x00").decode().rstrip("=")
    answer = client.get("/repos", params={"cursor": cursor})
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "invalid-cursor"


def test_a_review_reason_with_a_nul_is_refused_and_stores_nothing(served: tuple[TestClient, str]) -> None:
    client, secret = served
    body = {"repo": "nvidia/model", "revision": SHA, "decision": "reject", "reason": "calls home\u0000"}
    answer = client.post("/reviews", json=body, headers={"Authorization": f"Bearer {secret}"})
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "invalid-review"
    assert client.get("/gate", params={"repo": "nvidia/model", "revision": SHA}).json()["decided_by"] == \
        "policy default"
