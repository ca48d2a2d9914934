"""After a rejected push (issue 27 item 6): the gate without a revision still answers the older approved commit,
and every face says the branch moved (GET /gate's `warnings`, `hfvet gate` on stderr; the dashboard in
tests/integration/web/test_moved_badge.py). The rule: app.services.deployable."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli.main import app
from app.db.session import Store
from app.server import create_app
from app.settings import Settings
from tests.integration.api.stored import no_hub, policy, report, save

REPO = "nvidia/model"
OLD, NEW = "a" * 40, "b" * 40


@pytest.fixture
def moved(store: Store) -> Store:
    """main was vetted at OLD (approved), then moved to NEW, whose vet found something critical."""
    save(store, report(REPO, OLD, under=policy("default")), requested="main")
    save(store, report(REPO, NEW, b"EVIL", under=policy("default")), requested="main")
    return store


@pytest.fixture
def client(moved: Store) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(database_url=moved.url, policy="default"), resolve=no_hub)) as client:
        yield client


def test_the_gate_answers_the_older_approved_commit_with_a_warning(client: TestClient) -> None:
    answer = client.get("/gate", params={"repo": REPO})
    assert answer.status_code == 200, answer.text
    doc = answer.json()
    assert doc["approved"] is True and doc["revision"] == OLD and doc["status"] == "approved"
    assert doc["warnings"] == [f"main moved to {NEW}, which is rejected; the older approved commit {OLD} stays "
                               "deployable by pin"]


def test_a_pinned_answer_and_the_new_head_say_what_they_said_before(client: TestClient) -> None:
    pinned = client.get("/gate", params={"repo": REPO, "revision": OLD})
    assert pinned.status_code == 200 and "warnings" not in pinned.json()  # the caller pinned: nothing moved
    head = client.get("/gate", params={"repo": REPO, "revision": NEW})
    assert head.status_code == 403 and head.json()["status"] == "denied"


def test_no_warning_when_the_newest_commit_is_approved(store: Store) -> None:
    save(store, report(REPO, OLD, b"EVIL", under=policy("default")), requested="main")
    save(store, report(REPO, NEW, under=policy("default")), requested="main")
    with TestClient(create_app(Settings(database_url=store.url, policy="default"), resolve=no_hub)) as client:
        doc = client.get("/gate", params={"repo": REPO}).json()
    assert doc["revision"] == NEW and "warnings" not in doc


def test_the_openapi_schema_documents_the_warnings(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()["components"]["schemas"]["GateOut"]
    assert schema["properties"]["warnings"]["type"] == "array"
    assert "deployable by pin" in schema["properties"]["warnings"]["description"]


def test_hfvet_gate_prints_the_approved_sha_and_warns_on_stderr(moved: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HFVET_DATABASE_URL", moved.url)
    monkeypatch.setenv("HFVET_POLICY", "default")
    result = CliRunner().invoke(app, ["gate", REPO])
    assert result.exit_code == 0, result.output  # docs/gate.md: some approved commit, no revision asked: exit 0
    assert result.stdout == OLD + "\n"  # a deploy script's $(hfvet gate ...) gets the sha alone
    assert result.stderr.startswith(f"warning: main moved to {NEW}, which is rejected")
    as_json = CliRunner().invoke(app, ["gate", REPO, "--format", "json"])
    assert as_json.exit_code == 0 and '"warnings"' in as_json.stdout and "warning: main moved" in as_json.stderr


def test_hfvet_download_warns_as_the_gate_does(moved: Store, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`hfvet download` without --revision fetches the older approved commit and says why, as `gate` does."""
    from app.cli.download import _local

    monkeypatch.setenv("HFVET_DATABASE_URL", moved.url)
    monkeypatch.setenv("HFVET_POLICY", "default")
    approval = _local(REPO, None)
    assert approval.sha == OLD
    assert capsys.readouterr().err.startswith(f"warning: main moved to {NEW}, which is rejected")
