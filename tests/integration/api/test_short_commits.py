"""A short commit id several vetted commits share is refused over the API, naming them (`ambiguous-revision`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db import tokens
from app.server import create_app
from app.services.store import open_store
from app.settings import Settings
from tests.unit.services.test_references import stored

REPO = "nvidia/twin-commits"
TWO, THREE = "abcdef01" + "2" * 32, "abcdef01" + "3" * 32


@pytest.fixture
def client(tmp_path: Path) -> Iterator[tuple[TestClient, str]]:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'store.db'}", policy=Path("default"))
    store = open_store(settings)
    for sha in (TWO, THREE):
        stored(store, REPO, sha)
    with store.session() as session:
        secret = tokens.create(session, "reviewer-1", "reviewer", actor="test")
    store.close()

    def no_hub(repo: str, revision: str) -> str:
        raise AssertionError("the store knows the prefix: the hub is not asked")

    with TestClient(create_app(settings, resolve=no_hub)) as test_client:
        yield test_client, secret


def test_an_ambiguous_prefix_is_refused_with_the_candidates(client: tuple[TestClient, str]) -> None:
    api, secret = client
    gate = api.get("/gate", params={"repo": REPO, "revision": "abcdef01"})
    assert gate.status_code == 422
    assert gate.json()["error"]["code"] == "ambiguous-revision" and gate.json()["error"]["candidates"] == [TWO, THREE]
    review = api.post("/reviews", headers={"Authorization": f"Bearer {secret}"},
                      json={"repo": REPO, "revision": "abcdef01", "decision": "reject", "reason": "no"})
    assert review.status_code == 422 and review.json()["error"]["code"] == "ambiguous-revision"
    assert TWO in review.json()["error"]["message"] and THREE in review.json()["error"]["message"]
    assert api.get("/gate", params={"repo": REPO, "revision": "abcdef012"}).json()["revision"] == TWO
