"""POST /reviews over the API (in-process client): roles, bad input, and the gate flipping."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.db import tokens
from app.db.models import AuditRow, ReviewRow
from app.db.repository import save_report
from app.server import create_app
from app.services.store import open_store
from app.settings import Settings
from tests.integration.vetted import REJECT_REPO, REVIEW_REPO, Vetted, vet_examples

ROLES = ("reader", "vetter", "reviewer", "admin")


@pytest.fixture(scope="module")
def vetted(tmp_path_factory: pytest.TempPathFactory) -> Vetted:
    return vet_examples(tmp_path_factory.mktemp("hub"))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(database_url=f"sqlite:///{tmp_path / 'store.db'}", policy=Path("default"))


@pytest.fixture
def secrets(settings: Settings, vetted: Vetted) -> dict[str, str]:
    """A token per role, over a store holding the `review` and the `reject` example reports."""
    store = open_store(settings)
    with store.session() as session:
        for report in (vetted.review, vetted.reject):
            save_report(session, report, requested_revision="main", actor="test")
        made = {role: tokens.create(session, f"{role}-1", role, actor="test") for role in ROLES}
    store.close()
    return made


@pytest.fixture
def client(settings: Settings, secrets: dict[str, str]) -> Iterator[TestClient]:
    def no_hub(repo: str, revision: str) -> str:
        raise AssertionError("reviews and exact-commit gates never ask the hub")

    with TestClient(create_app(settings, resolve=no_hub)) as test_client:
        yield test_client


def post(client: TestClient, token: str | None, **body: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return client.post("/reviews", json=body, headers=headers)


def body(report_sha: str | None, repo: str = REVIEW_REPO, **changes: Any) -> dict[str, Any]:
    return {"repo": repo, "revision": report_sha, "decision": "approve", "reason": "read auto_map code"} | changes


def stored(settings: Settings) -> tuple[int, int]:
    store = open_store(settings)
    with store.session() as session:
        reviews = session.execute(select(func.count()).select_from(ReviewRow)).scalar_one()
        audits = session.execute(select(func.count()).select_from(AuditRow).where(AuditRow.action == "review"))
        counted = reviews, audits.scalar_one()
    store.close()
    return counted


def test_a_reviewer_approves_a_review_verdict_and_the_gate_flips(
    client: TestClient, secrets: dict[str, str], vetted: Vetted
) -> None:
    sha = vetted.review.revision
    before = client.get("/gate", params={"repo": REVIEW_REPO, "revision": sha})
    assert before.status_code == 403 and before.json()["verdict"] == "review"
    answer = post(client, secrets["reviewer"], **body(sha))
    assert answer.status_code == 201, answer.text
    doc = answer.json()
    assert doc["approved"] is True and doc["reviewer"] == "token:reviewer-1" and doc["role"] == "reviewer"
    assert doc["reviewed_verdict"] == "review" and doc["links"]["gate"].endswith(f"revision={sha}")
    after = client.get("/gate", params={"repo": REVIEW_REPO, "revision": sha})
    assert after.status_code == 200
    gate = after.json()
    assert gate["approved"] is True and gate["decided_by"] == "token:reviewer-1 (reviewer)"
    assert gate["decided_at"] == doc["at"].replace("Z", "+00:00") and sha in gate["pins"]["vllm"]


def test_a_reviewers_reject_keeps_the_gate_shut(client: TestClient, secrets: dict[str, str], vetted: Vetted) -> None:
    sha = vetted.review.revision
    assert post(client, secrets["reviewer"], **body(sha, decision="reject", reason="calls home")).status_code == 201
    gate = client.get("/gate", params={"repo": REVIEW_REPO, "revision": sha})
    assert gate.status_code == 403 and "calls home" in gate.json()["reasons"][0]


@pytest.mark.parametrize(("role", "status", "code"), [
    (None, 401, "token-required"), ("reader", 403, "role-too-low"), ("vetter", 403, "role-too-low")])
def test_who_may_not_review(client: TestClient, settings: Settings, secrets: dict[str, str], vetted: Vetted,
                            role: str | None, status: int, code: str) -> None:
    answer = post(client, secrets[role] if role else None, **body(vetted.review.revision))
    assert answer.status_code == status and answer.json()["error"]["code"] == code
    assert stored(settings) == (0, 0)


def test_a_bad_token_is_401(client: TestClient, settings: Settings, vetted: Vetted) -> None:
    answer = post(client, "hfv_not-a-token", **body(vetted.review.revision))
    assert answer.status_code == 401 and stored(settings) == (0, 0)


def test_overriding_a_reject_needs_an_admin(
    client: TestClient, settings: Settings, secrets: dict[str, str], vetted: Vetted
) -> None:
    sha = vetted.reject.revision
    refused = post(client, secrets["reviewer"], **body(sha, repo=REJECT_REPO))
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "admin-required"
    assert stored(settings) == (0, 0)
    override = post(client, secrets["admin"], **body(sha, repo=REJECT_REPO, reason="vendored fork, audited"))
    assert override.status_code == 201
    gate = client.get("/gate", params={"repo": REJECT_REPO, "revision": sha}).json()
    assert gate["approved"] is True and gate["decided_by"] == "token:admin-1 (admin)"


def test_approving_twice_is_409_and_stores_one_review(
    client: TestClient, settings: Settings, secrets: dict[str, str], vetted: Vetted
) -> None:
    assert post(client, secrets["reviewer"], **body(vetted.review.revision)).status_code == 201
    again = post(client, secrets["admin"], **body(vetted.review.revision))
    assert again.status_code == 409 and again.json()["error"]["code"] == "already-approved"
    assert stored(settings) == (1, 1)


def test_a_short_commit_id_is_reviewed_as_its_vetted_commit(
    client: TestClient, secrets: dict[str, str], vetted: Vetted
) -> None:
    """The demo and the dashboard show 12 hex digits: a review and the gate take them (app.services.commits)."""
    sha = vetted.review.revision
    answer = post(client, secrets["reviewer"], **body(sha[:12]))
    assert answer.status_code == 201, answer.text
    assert answer.json()["revision"] == sha and answer.json()["links"]["gate"].endswith(sha)
    gate = client.get("/gate", params={"repo": REVIEW_REPO, "revision": sha[:12]})
    assert gate.status_code == 200 and gate.json()["revision"] == sha and gate.json()["requested"] == sha


def test_the_gate_suggests_a_vetted_repo_for_a_typo(client: TestClient, vetted: Vetted) -> None:
    answer = client.get("/gate", params={"repo": REVIEW_REPO.replace("Mini", "Mimi")})
    assert answer.status_code == 404 and answer.json()["status"] == "not-vetted"
    assert answer.json()["reasons"][0] == f"did you mean {REVIEW_REPO}?"  # first: the likelier next step


def test_a_malformed_repo_id_is_refused_before_the_store(client: TestClient) -> None:
    answer = client.get("/gate", params={"repo": "nvidia"})
    assert answer.status_code == 422 and answer.json()["error"] == {
        "code": "invalid-repo", "message": "repo must be ORG/NAME, got 'nvidia'"}


@pytest.mark.parametrize(("changes", "status", "code"), [
    ({"revision": "f" * 40}, 404, "not-vetted"),
    ({"repo": "nobody/never"}, 404, "not-vetted"),
    ({"repo": "not a repo"}, 422, "invalid-repo"),
    ({"revision": "main"}, 422, "invalid-revision"),  # said in words, not with the schema's regex
    ({"revision": "F" * 40}, 422, "invalid-revision"),
    ({"revision": "f" * 41}, 422, "invalid-request"),
    ({"decision": "maybe"}, 422, "invalid-request"),
    ({"reason": ""}, 422, "invalid-request"),
    ({"reason": "   "}, 422, "invalid-review"),
    ({"reason": "x" * 2001}, 422, "invalid-request"),
    ({"extra": "field"}, 422, "invalid-request"),
])
def test_bad_reviews_get_a_clear_4xx_and_change_nothing(
    client: TestClient, settings: Settings, secrets: dict[str, str], vetted: Vetted,
    changes: dict[str, Any], status: int, code: str,
) -> None:
    answer = post(client, secrets["admin"], **body(vetted.review.revision, **changes))
    assert answer.status_code == status, answer.text
    assert answer.json()["error"]["code"] == code and answer.json()["error"]["message"]
    assert stored(settings) == (0, 0)


BAD_BODIES = [(b"{", "application/json"), (b'{"repo":', "application/json"), (b"\xff", "application/json"),
              (b"[]", "application/json"), (b"repo=x", "application/x-www-form-urlencoded"), (b"", "")]


@pytest.mark.parametrize(("content", "content_type"), BAD_BODIES)
@pytest.mark.parametrize(("role", "status", "code"), [
    (None, 401, "token-required"), ("bad", 401, "bad-token"), ("vetter", 403, "role-too-low"),
    ("reviewer", 422, "invalid-request")])
def test_the_caller_is_checked_before_the_body_is_read(
    client: TestClient, settings: Settings, secrets: dict[str, str], content: bytes, content_type: str,
    role: str | None, status: int, code: str,
) -> None:
    secret = {None: None, "bad": "hfv_not-a-token"}.get(role, secrets.get(role or ""))
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    answer = client.post("/reviews", content=content, headers=headers | {"Content-Type": content_type})
    assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), answer.text
    assert stored(settings) == (0, 0)


def test_a_missing_reason_is_422(client: TestClient, secrets: dict[str, str], vetted: Vetted) -> None:
    doc = body(vetted.review.revision)
    del doc["reason"]
    answer = client.post("/reviews", json=doc, headers={"Authorization": f"Bearer {secrets['admin']}"})
    assert answer.status_code == 422 and "reason" in answer.json()["error"]["message"]


def test_an_admins_veto_binds_a_reviewer(
    client: TestClient, settings: Settings, secrets: dict[str, str], vetted: Vetted
) -> None:
    # issue 25: a veto by a higher role binds lower roles; before, a reviewer's approval lifted it (gate 200).
    sha = vetted.review.revision
    assert post(client, secrets["admin"], **body(sha, decision="reject", reason="calls home")).status_code == 201
    lifted = post(client, secrets["reviewer"], **body(sha))
    assert lifted.status_code == 403 and lifted.json()["error"]["code"] == "admin-required"
    assert "admin" in lifted.json()["error"]["message"] and stored(settings) == (1, 1)
    assert client.get("/gate", params={"repo": REVIEW_REPO, "revision": sha}).status_code == 403
    assert post(client, secrets["admin"], **body(sha, reason="re-read: the call is a docs link")).status_code == 201
