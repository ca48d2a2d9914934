"""GET /gate's cache of exact-commit answers never outlives a change to the store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.db.models import ReviewRow
from app.db.session import Store
from app.db.version import store_version
from app.server import create_app
from app.settings import Settings
from tests.integration.api.stored import policy, report, save

SHA = "a" * 40


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(database_url=store.url))) as client:
        yield client


def status(client: TestClient, repo: str = "nvidia/model") -> int:
    return client.get("/gate", params={"repo": repo, "revision": SHA}).status_code


def test_a_new_report_for_a_cached_commit_changes_the_answer(client: TestClient, store: Store) -> None:
    assert status(client) == 404  # not vetted: cached too
    save(store, report("nvidia/model", SHA, under=policy("default")))
    assert status(client) == status(client) == 200
    save(store, report("nvidia/model", SHA, b"EVIL", under=policy("default")))  # a re-vet finds something
    assert status(client) == 403


def test_a_report_of_another_repo_does_not_serve_a_wrong_answer(client: TestClient, store: Store) -> None:
    save(store, report("nvidia/model", SHA, under=policy("default")))
    assert status(client) == 200
    save(store, report("nvidia/other", SHA, b"EVIL", under=policy("default")))
    assert (status(client), status(client, "nvidia/other")) == (200, 403)


def test_the_store_version_moves_with_reports_and_reviews(store: Store) -> None:
    with store.engine.connect() as conn:
        empty = store_version(conn)
    report_id = save(store, report("nvidia/model", SHA, under=policy("default")))
    with store.engine.connect() as conn:
        after_report = store_version(conn)
    with store.session() as session:
        session.add(ReviewRow(report_pk=report_id, decision="approve", reason="looked", reviewer="r", role="reviewer"))
    with store.engine.connect() as conn:
        after_review = store_version(conn)
    assert empty == (0, 0) and after_report == (report_id, 0) and after_review[0] == report_id
    assert after_review[1] > 0
