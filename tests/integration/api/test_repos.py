"""GET /repos and GET /repos/{org}/{name}: listing, filters, pagination, history, bad input."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.db.session import Store
from app.server import create_app
from app.settings import Settings
from tests.integration.api.stored import policy, report, save

A, B, C, D = ("a" * 40, "b" * 40, "c" * 40, "d" * 40)


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    def no_hub(repo: str, revision: str) -> str:
        raise AssertionError("listing never asks the hub")

    with TestClient(create_app(Settings(database_url=store.url), resolve=no_hub)) as client:
        yield client


@pytest.fixture
def vetted(store: Store) -> None:
    """Four repos: approved vendor, rejected vendor, third-party under review, and one under another policy."""
    default = policy("default")
    save(store, report("nvidia/clean", A, under=default))
    save(store, report("NVIDIA/evil", B, b"EVIL", under=default))
    save(store, report("acme/quant", C, under=default))
    save(store, report("acme/zed", D, under=policy("unsafe-allow-all")))  # approve there, review here


def listing(client: TestClient, **params: Any) -> dict[str, Any]:
    response = client.get("/repos", params=params)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def names(doc: dict[str, Any]) -> list[str]:
    return [item["repo"] for item in doc["items"]]


def test_every_repo_is_listed_with_its_tier_and_effective_verdict(client: TestClient, vetted: None) -> None:
    doc = listing(client)
    assert names(doc) == ["NVIDIA/evil", "acme/quant", "acme/zed", "nvidia/clean"]
    by_repo = {i["repo"]: i for i in doc["items"]}
    assert by_repo["nvidia/clean"]["tier"] == "vendor-official"
    assert by_repo["NVIDIA/evil"]["tier"] == "vendor-official"  # orgs match case-folded
    assert by_repo["acme/quant"]["tier"] == "third-party"
    assert {r: i["latest"]["verdict"] for r, i in by_repo.items()} == {
        "nvidia/clean": "approve", "NVIDIA/evil": "reject", "acme/quant": "review", "acme/zed": "review"}
    assert by_repo["nvidia/clean"]["latest"]["approved"] is True
    assert by_repo["nvidia/clean"]["latest"]["revision"] == A
    assert "re-decided" in by_repo["acme/zed"]["latest"]["decided_by"]
    assert by_repo["acme/quant"]["links"]["self"] == "/repos/acme/quant"
    assert doc["next_cursor"] is None and doc["limit"] == 50


def test_filters_by_org_tier_and_verdict(client: TestClient, vetted: None) -> None:
    assert names(listing(client, org="nvidia")) == ["NVIDIA/evil", "nvidia/clean"]
    assert names(listing(client, tier="vendor-official")) == ["NVIDIA/evil", "nvidia/clean"]
    assert names(listing(client, tier="third-party")) == ["acme/quant", "acme/zed"]
    assert names(listing(client, tier="trusted")) == []
    assert names(listing(client, verdict="review")) == ["acme/quant", "acme/zed"]
    assert names(listing(client, verdict="approve")) == ["nvidia/clean"]
    assert names(listing(client, org="acme", verdict="reject")) == []
    assert names(listing(client, tier="vendor-official", verdict="reject")) == ["NVIDIA/evil"]


def test_the_newest_report_decides_the_listed_verdict(client: TestClient, store: Store, vetted: None) -> None:
    save(store, report("nvidia/clean", B, b"EVIL", under=policy("default")))  # a newer commit, rejected
    item = listing(client, org="nvidia", verdict="reject")["items"]
    assert [(i["repo"], i["latest"]["revision"], i["revisions"]) for i in item] == [
        ("NVIDIA/evil", B, 1), ("nvidia/clean", B, 2)]


def test_cursor_pages_cover_every_repo_once(client: TestClient, vetted: None) -> None:
    seen, cursor, pages = [], None, 0
    while True:
        doc = listing(client, limit=3, **({"cursor": cursor} if cursor else {}))
        seen += names(doc)
        pages += 1
        cursor = doc["next_cursor"]
        if cursor is None:
            break
        assert doc["links"]["next"].startswith("/repos?limit=3&cursor=")
    assert pages == 2 and seen == names(listing(client))


def test_an_exactly_full_last_page_has_no_next_cursor(client: TestClient, vetted: None) -> None:
    doc = listing(client, limit=4)
    assert len(doc["items"]) == 4 and doc["next_cursor"] is None and doc["links"] == {}


def test_pages_with_a_verdict_filter_count_only_matches(client: TestClient, vetted: None) -> None:
    first = listing(client, verdict="review", limit=1)
    assert names(first) == ["acme/quant"] and first["next_cursor"]
    assert "verdict=review" in first["links"]["next"]
    second = listing(client, verdict="review", limit=1, cursor=first["next_cursor"])
    assert names(second) == ["acme/zed"] and second["next_cursor"] is None
    assert names(listing(client, verdict="review", offset=1)) == ["acme/zed"]


def test_offset_skips_repos(client: TestClient, vetted: None) -> None:
    assert names(listing(client, offset=1, limit=2)) == ["acme/quant", "acme/zed"]
    assert names(listing(client, offset=10)) == []


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"limit": 0}, "invalid-request"),
        ({"limit": 201}, "invalid-request"),
        ({"limit": "ten"}, "invalid-request"),
        ({"offset": -1}, "invalid-request"),
        ({"tier": "vendor"}, "invalid-request"),
        ({"verdict": "approved"}, "invalid-request"),
        ({"cursor": "not a cursor!"}, "invalid-cursor"),
        ({"cursor": "bm9zbGFzaA"}, "invalid-cursor"),  # base64 of "noslash": not one this server made
        ({"cursor": "YWNtZS9xdWFudA", "offset": 1}, "invalid-request"),
        ({"org": "bad--org"}, "invalid-org"),
        ({"org": "a/b"}, "invalid-org"),
    ],
)
def test_bad_listing_input_is_a_422_json_error(client: TestClient, vetted: None, params: dict[str, Any],
                                               code: str) -> None:
    response = client.get("/repos", params=params)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == code and response.json()["error"]["message"]


def test_a_cursor_from_a_page_is_accepted(client: TestClient, vetted: None) -> None:
    assert names(listing(client, cursor="YWNtZS9xdWFudA")) == ["acme/zed", "nvidia/clean"]  # after acme/quant


def test_an_empty_store_lists_nothing(client: TestClient) -> None:
    assert listing(client) == {"items": [], "limit": 50, "next_cursor": None, "links": {}}


def test_history_lists_every_report_per_commit_newest_first(client: TestClient, store: Store) -> None:
    default = policy("default")
    first = save(store, report("nvidia/model", A), requested="main", actor="ci")  # the interim verdict
    second = save(store, report("nvidia/model", A, under=default), requested=A, actor="token:deploy")
    third = save(store, report("nvidia/model", B, b"EVIL", under=default), requested="v2")
    doc = client.get("/repos/nvidia/model").json()
    assert doc["repo"] == "nvidia/model" and doc["tier"] == "vendor-official"
    assert doc["policy"] == {"name": default.name, "sha256": default.sha256}
    assert [c["revision"] for c in doc["revisions"]] == [B, A]
    assert [r["id"] for r in doc["revisions"][0]["reports"]] == [third]
    newer, older = doc["revisions"][1]["reports"]
    assert (newer["id"], older["id"]) == (second, first)
    assert newer["requested_revision"] == A and newer["requested_by"] == "token:deploy"
    assert newer["policy"]["name"] == "default" and newer["effective"]["verdict"] == "approve"
    assert older["policy"] == {"name": "interim-severity", "sha256": None}
    assert older["requested_revision"] == "main" and "re-decided" in older["effective"]["decided_by"]
    assert doc["revisions"][0]["reports"][0]["effective"]["approved"] is False
    assert older["decided_at"] <= newer["decided_at"]


def test_history_of_an_unknown_repo_is_404(client: TestClient, vetted: None) -> None:
    response = client.get("/repos/nvidia/never-vetted")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "repo-not-vetted"
    assert "POST /vet?repo=nvidia/never-vetted" in response.json()["error"]["message"]


def test_history_of_a_malformed_repo_id_is_422(client: TestClient) -> None:
    response = client.get("/repos/bad--org/name")
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid-repo"


def test_history_shows_a_reviewers_veto_as_the_gate_does(client: TestClient, store: Store) -> None:
    from app.services.reviews import ReviewRequest, submit_review

    default = policy("default")
    save(store, report("nvidia/model", A, under=default))
    submit_review(store, default, ReviewRequest("nvidia/model", A, "reject", "key leaked", "token:r", "reviewer"))
    assert client.get("/gate", params={"repo": "nvidia/model", "revision": A}).status_code == 403
    effective = client.get("/repos/nvidia/model").json()["revisions"][0]["reports"][0]["effective"]
    assert effective["approved"] is False and effective["decided_by"] == "token:r (reviewer)"


def test_the_listing_shows_a_reviewers_veto_as_the_gate_does(client: TestClient, store: Store) -> None:
    from app.services.reviews import ReviewRequest, submit_review

    default = policy("default")
    save(store, report("nvidia/model", A, under=default))
    save(store, report("nvidia/other", A, under=default))
    submit_review(store, default, ReviewRequest("nvidia/model", A, "reject", "key leaked", "token:r", "reviewer"))
    latest = {i["repo"]: i["latest"] for i in listing(client)["items"]}
    assert latest["nvidia/model"]["approved"] is False and latest["nvidia/model"]["decided_by"] == "token:r (reviewer)"
    assert latest["nvidia/other"]["approved"] is True
