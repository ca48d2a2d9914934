"""GET /bom/{org}/{name}/{commit} and `hfvet bom` (local store and --server): the stored report's ML-BOM."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli.main import app as cli
from app.db import tokens
from app.db.session import Store
from app.hubfixture import AppServer
from app.server import create_app
from app.settings import Settings
from tests.integration.api.stored import no_hub, policy, report, save

A, B, C = "a" * 40, "b" * 40, "c" * 40
MEDIA = "application/vnd.cyclonedx+json; version=1.6"
VALIDATOR = JsonStrictValidator(SchemaVersion.V1_6)


@pytest.fixture
def vetted(store: Store) -> dict[str, int]:
    """nvidia/clean approved at A; acme/evil rejected at B, then vetted again there (the newest report counts)."""
    default = policy("default")
    return {"clean": save(store, report("nvidia/clean", A, under=default)),
            "evil-old": save(store, report("acme/evil", B, under=default)),
            "evil": save(store, report("acme/evil", B, b"EVIL", under=default))}


def settings_of(store: Store, **changes: object) -> Settings:
    return Settings(database_url=store.url, policy=Path("default"), **changes)  # type: ignore[arg-type]


@pytest.fixture
def client(store: Store, vetted: dict[str, int]) -> Iterator[TestClient]:
    with TestClient(create_app(settings_of(store), resolve=no_hub)) as client:
        yield client


def valid(text: str) -> dict[str, object]:
    error = VALIDATOR.validate_str(text)
    assert error is None, str(error)[:2000]
    found: dict[str, object] = json.loads(text)
    return found


def properties(doc: dict[str, object]) -> dict[str, str]:
    metadata = doc["metadata"]
    assert isinstance(metadata, dict)
    return {p["name"]: p["value"] for p in metadata["properties"]}


def test_the_bom_of_a_vetted_commit_is_served_as_cyclonedx_the_same_bytes_each_time(
        client: TestClient, vetted: dict[str, int]) -> None:
    first = client.get(f"/bom/acme/evil/{B}")
    assert first.status_code == 200, first.text
    assert first.headers["content-type"] == MEDIA
    doc = valid(first.text)
    assert properties(doc) | {"hfvet:policy_sha256": "-"} == {
        "hfvet:verdict": "reject", "hfvet:policy": "default", "hfvet:policy_sha256": "-",
        "hfvet:report_id": str(vetted["evil"]), "hfvet:tier": "third-party"}
    assert client.get(f"/bom/acme/evil/{B[:7]}").content == first.content  # a short sha names the same commit


def test_another_server_over_the_same_store_gives_the_same_bytes(client: TestClient, store: Store) -> None:
    before = client.get(f"/bom/nvidia/clean/{A}").content
    with TestClient(create_app(settings_of(store), resolve=no_hub)) as again:  # another process, same store
        assert again.get(f"/bom/nvidia/clean/{A}").content == before
    assert properties(valid(before.decode()))["hfvet:verdict"] == "approve"


@pytest.mark.parametrize(("path", "status", "code"), [
    (f"/bom/nvidia/clean/{B}", 404, "commit-not-vetted"),
    (f"/bom/nobody/never/{A}", 404, "commit-not-vetted"),
    ("/bom/nvidia/clean/main", 422, "invalid-revision"),
    (f"/bom/nvidia/a--b/{A}", 422, "invalid-repo"),
])
def test_unknown_commits_and_bad_ids_are_refused_with_a_clear_error(client: TestClient, path: str, status: int,
                                                                   code: str) -> None:
    response = client.get(path)
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    if status == 404:
        assert "has never been vetted" in response.json()["error"]["message"]


def test_under_read_auth_the_bom_needs_a_reader_token(store: Store, vetted: dict[str, int]) -> None:
    with store.session() as session:
        secret = tokens.create(session, "reader-1", "reader", actor="test")
    with TestClient(create_app(settings_of(store, read_auth=True), resolve=no_hub)) as client:
        assert client.get(f"/bom/nvidia/clean/{A}").json()["error"]["code"] == "token-required"
        answer = client.get(f"/bom/nvidia/clean/{A}", headers={"Authorization": f"Bearer {secret}"})
        assert answer.status_code == 200 and answer.headers["content-type"] == MEDIA


def run(store: Store, *args: str, **env: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["bom", *args], env={"HFVET_DATABASE_URL": store.url, "HFVET_POLICY": "default",
                                                          "HFVET_SERVER": "", **env})
    return result.exit_code, result.stdout, result.stderr


def test_hfvet_bom_prints_the_same_document_as_the_api(client: TestClient, store: Store) -> None:
    code, out, _ = run(store, "acme/evil", "--revision", B)
    assert code == 0 and out == client.get(f"/bom/acme/evil/{B}").text
    code, newest, _ = run(store, "nvidia/clean")  # without --revision: the newest vetted commit
    assert code == 0 and newest == client.get(f"/bom/nvidia/clean/{A}").text


def test_hfvet_bom_writes_out_and_says_so(store: Store, vetted: dict[str, int], tmp_path: Path) -> None:
    target = tmp_path / "model.cdx.json"
    code, out, err = run(store, "nvidia/clean", "-r", A[:9], "--out", str(target))
    assert (code, out) == (0, "") and str(target) in err
    valid(target.read_text())
    code, _, err = run(store, "nvidia/clean", "--out", str(tmp_path / "missing" / "x.json"))
    assert code == 2 and "cannot write" in err


@pytest.mark.parametrize(("args", "exit_code", "said"), [
    (("nvidia/clean", "--revision", B), 4, "has never been vetted"),
    (("nobody/never",), 4, "has never been vetted"),
    (("nvidia/clean", "--revision", "main"), 2, "revision must be a commit"),
    (("not a repo",), 2, "error"),
])
def test_hfvet_bom_exit_codes(store: Store, vetted: dict[str, int], args: tuple[str, ...], exit_code: int,
                              said: str) -> None:
    code, out, err = run(store, *args)
    assert (code, out) == (exit_code, "") and said in err


def test_hfvet_bom_through_a_server_gives_the_servers_bytes(store: Store, vetted: dict[str, int],
                                                           tmp_path: Path) -> None:
    served = create_app(settings_of(store), resolve=no_hub)
    with TestClient(served), AppServer(served) as server:  # the TestClient runs the lifespan AppServer does not
        local = run(store, "acme/evil", "--revision", B)[1]
        other_store = f"sqlite:///{tmp_path / 'empty.db'}"  # the local store is not asked
        code, out, _ = run(store, "acme/evil", "--server", server.url, HFVET_DATABASE_URL=other_store)
        assert code == 0 and out == local
        code, _, err = run(store, "acme/evil", "-r", C, "--server", server.url)
        assert code == 4 and "has never been vetted" in err
