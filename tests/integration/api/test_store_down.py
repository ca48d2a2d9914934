"""A store that fails under a running server (restarting, gone, refusing) gets a clear 503, never a bare 500:
the gate fails closed and a write changes nothing. The real PostgreSQL restart is bench/pg_restart.py (not in CI:
it would cut off the suite's other PostgreSQL tests)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.db import tokens
from app.db.session import Store
from app.server import create_app
from app.settings import Settings
from tests.integration.api.stored import policy, report, save
from tests.integration.api.test_gate_fast_path import store as store

SHA = "a" * 40
DEFAULT = policy("default")


def _no_hub(repo: str, revision: str) -> str:
    return SHA


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    app = create_app(Settings(database_url=store.url, job_isolation="thread"), resolve=_no_hub)  # type: ignore[arg-type]
    with TestClient(app) as test_client:
        yield test_client


def _break(store: Store) -> None:
    """What a store that lost its tables answers to every query: an error from the driver."""
    with store.engine.begin() as conn:
        for table in ("reviews", "vets", "reports", "revisions", "repos"):
            conn.execute(text(f"DROP TABLE {table} CASCADE" if store.engine.dialect.name == "postgresql"
                              else f"DROP TABLE {table}"))


def test_the_gate_and_writes_answer_503_when_the_store_fails(client: TestClient, store: Store) -> None:
    save(store, report("nvidia/model", SHA, under=DEFAULT))
    with store.session() as session:
        vetter = {"Authorization": f"Bearer {tokens.create(session, 'ci', 'vetter', actor='test')}"}
    assert client.get("/gate", params={"repo": "nvidia/model", "revision": SHA}).status_code == 200
    _break(store)
    for response in (client.get("/gate", params={"repo": "nvidia/model", "revision": SHA}),
                     client.get("/gate", params={"repo": "nvidia/model"}),
                     client.get("/repos"),
                     client.post("/vet", params={"repo": "nvidia/model"}, headers=vetter)):
        assert response.status_code == 503, response.text
        assert response.json()["error"]["code"] in ("store-unavailable", "unavailable")  # the queue names its own
        assert store.url.split("@")[-1] not in response.text  # no host, path or user of the store
    assert client.get("/gate", params={"repo": "nvidia/model"}).headers["retry-after"] == "1"
