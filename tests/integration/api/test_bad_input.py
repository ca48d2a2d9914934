"""Bad input over HTTP: a clear 4xx JSON error with a stable code, and nothing in the store changes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from app.db import tokens
from app.db.session import Store
from tests.integration.api.conftest import Live
from tests.integration.api.live import create_token, revoke_token, row_counts

NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"


@pytest.fixture
def unchanged(sqlite_live: Live) -> Iterator[Live]:
    """Fails the test if any table gained or lost a row."""
    before = row_counts(sqlite_live.store_url)
    yield sqlite_live
    assert row_counts(sqlite_live.store_url) == before


def error_of(answer: httpx.Response, status: int, code: str) -> str:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    error = answer.json()["error"]
    assert error["code"] == code and error["message"], error
    return str(error["message"])


def post_vet(live: Live, role: str | None = "vetter", **params: object) -> httpx.Response:
    headers = live.auth(role) if role else {}
    return httpx.post(f"{live.url}/vet", params=params, headers=headers, timeout=30)


BAD_REPOS = ["nvidia", "a/b/c", "../etc", "org/na me", "org/name.git", "-org/name", "o/" + "n" * 97]


@pytest.mark.parametrize("repo", BAD_REPOS)
def test_malformed_repo_ids_are_refused_before_the_hub_is_asked(unchanged: Live, repo: str) -> None:
    message = error_of(post_vet(unchanged, repo=repo), 422, "invalid-repo")
    assert "repo" in message.lower() or "name" in message.lower()
    error_of(httpx.get(f"{unchanged.url}/gate", params={"repo": repo}), 422, "invalid-repo")


@pytest.mark.parametrize("revision", ["../main", "a//b", "main/", "-x", "a b", "refs/..", ""])
def test_malformed_revisions_are_refused(unchanged: Live, revision: str) -> None:
    error_of(post_vet(unchanged, repo=NVIDIA, revision=revision), 422, "invalid-revision")


def test_an_unknown_repo_is_404(unchanged: Live) -> None:
    assert "nobody/nothing" in error_of(post_vet(unchanged, repo="nobody/nothing"), 404, "repo-not-found")


@pytest.mark.parametrize("revision", ["no-such-branch", "f" * 40])
def test_a_revision_not_on_the_hub_is_404(unchanged: Live, revision: str) -> None:
    error_of(post_vet(unchanged, repo=NVIDIA, revision=revision), 404, "revision-not-found")


@pytest.mark.parametrize(("repo", "revision", "code"), [
    (NVIDIA, "no-such-branch", "revision-not-found"),
    (NVIDIA, "v9.9.9", "revision-not-found"),
    ("nobody/nothing", "main", "repo-not-found"),
])
def test_the_gate_says_404_for_what_the_hub_does_not_have(unchanged: Live, repo: str, revision: str,
                                                          code: str) -> None:
    """As POST /vet says: the hub answered, so it is no outage (503 is for a hub that cannot be reached)."""
    answer = httpx.get(f"{unchanged.url}/gate", params={"repo": repo, "revision": revision}, timeout=30)
    assert repo in error_of(answer, 404, code)
    error_of(post_vet(unchanged, repo=repo, revision=revision), 404, code)


def test_a_too_short_commit_id_says_how_long_one_must_be(unchanged: Live) -> None:
    answer = httpx.get(f"{unchanged.url}/gate", params={"repo": NVIDIA, "revision": "9f0f"}, timeout=30)
    assert "(a short commit id needs 7 or more hex digits)" in error_of(answer, 404, "revision-not-found")


def test_a_vet_needs_a_token(unchanged: Live) -> None:
    assert "vetter" in error_of(post_vet(unchanged, None, repo=NVIDIA), 401, "token-required")


def test_a_revoked_token_is_refused(unchanged: Live) -> None:
    error_of(post_vet(unchanged, "revoked", repo=NVIDIA), 401, "bad-token")


def test_a_token_revoked_while_the_server_runs_is_refused_at_once(sqlite_live: Live) -> None:
    secret = create_token(sqlite_live.store_url, "vetter", "short-lived")
    headers = {"Authorization": f"Bearer {secret}"}
    probe = httpx.post(f"{sqlite_live.url}/vet", params={"repo": "nobody/nothing"}, headers=headers)
    assert probe.status_code == 404  # authenticated: got as far as the hub
    revoke_token(sqlite_live.store_url, "short-lived")
    before = row_counts(sqlite_live.store_url)
    error_of(httpx.post(f"{sqlite_live.url}/vet", params={"repo": NVIDIA}, headers=headers), 401, "bad-token")
    assert row_counts(sqlite_live.store_url) == before


def stored_token(store_url: str, name: str, expires_at: datetime) -> dict[str, str]:
    store = Store(store_url)
    try:
        with store.session() as session:
            secret = tokens.create(session, name, "admin", actor="test", expires_at=expires_at)
    finally:
        store.close()
    return {"Authorization": f"Bearer {secret}"}


def test_an_expired_token_is_refused_with_its_own_code(sqlite_live: Live) -> None:
    headers = stored_token(sqlite_live.store_url, "expired-admin", datetime.now(UTC) - timedelta(seconds=1))
    before = row_counts(sqlite_live.store_url)
    answer = httpx.post(f"{sqlite_live.url}/vet", params={"repo": NVIDIA}, headers=headers, timeout=30)
    message = error_of(answer, 401, "token-expired")
    assert "expired-admin" in message and "expired at" in message
    assert row_counts(sqlite_live.store_url) == before


def test_a_token_expiring_while_the_server_runs_is_refused_from_then_on(sqlite_live: Live) -> None:
    expires_at = datetime.now(UTC) + timedelta(seconds=2)
    headers = stored_token(sqlite_live.store_url, "brief", expires_at)
    probe = httpx.post(f"{sqlite_live.url}/vet", params={"repo": "nobody/nothing"}, headers=headers)
    assert probe.status_code == 404, probe.text  # authenticated: got as far as the hub
    time.sleep(max(0.0, (expires_at - datetime.now(UTC)).total_seconds()) + 0.2)
    before = row_counts(sqlite_live.store_url)
    error_of(httpx.post(f"{sqlite_live.url}/vet", params={"repo": NVIDIA}, headers=headers), 401, "token-expired")
    assert row_counts(sqlite_live.store_url) == before


def test_a_forged_token_and_a_bad_scheme_are_refused(unchanged: Live) -> None:
    forged = {"Authorization": "Bearer hfv_" + "x" * 43}
    error_of(httpx.post(f"{unchanged.url}/vet", params={"repo": NVIDIA}, headers=forged), 401, "bad-token")
    basic = {"Authorization": "Basic dXNlcjpwYXNz"}
    error_of(httpx.post(f"{unchanged.url}/vet", params={"repo": NVIDIA}, headers=basic), 401, "bad-authorization")


def test_a_reader_may_not_vet(unchanged: Live) -> None:
    message = error_of(post_vet(unchanged, "reader", repo=NVIDIA), 403, "role-too-low")
    assert "reader" in message and "vetter" in message


def test_oversized_query_values_are_refused(unchanged: Live) -> None:
    error_of(post_vet(unchanged, repo="o/" + "n" * 300), 422, "invalid-request")
    error_of(post_vet(unchanged, repo=NVIDIA, revision="r" * 300), 422, "invalid-request")
    error_of(httpx.get(f"{unchanged.url}/gate", params={"repo": "o/" + "n" * 300}), 422, "invalid-request")


@pytest.mark.parametrize("wait", ["-1", "301", "soon", "nan"])
def test_a_bad_wait_is_refused(unchanged: Live, wait: str) -> None:
    error_of(post_vet(unchanged, repo=NVIDIA, wait=wait), 422, "invalid-request")


def test_an_oversized_body_is_refused_whether_declared_or_streamed(unchanged: Live) -> None:
    big = b"x" * (1024 * 1024 + 1)
    declared = httpx.post(f"{unchanged.url}/vet", params={"repo": NVIDIA}, headers=unchanged.auth("vetter"),
                          content=big)
    error_of(declared, 413, "body-too-large")

    def chunks() -> Iterator[bytes]:
        for _ in range(17):
            yield b"y" * 65536

    streamed = httpx.post(f"{unchanged.url}/vet", params={"repo": NVIDIA}, headers=unchanged.auth("vetter"),
                          content=chunks())
    error_of(streamed, 413, "body-too-large")


def test_an_unknown_job_id_is_404(unchanged: Live) -> None:
    error_of(httpx.get(f"{unchanged.url}/vet/{'0' * 32}"), 404, "job-not-found")
    error_of(httpx.get(f"{unchanged.url}/vet/{'z' * 500}"), 404, "job-not-found")


def test_an_unknown_path_and_a_wrong_method_are_json_errors(unchanged: Live) -> None:
    error_of(httpx.get(f"{unchanged.url}/nowhere"), 404, "not-found")
    error_of(httpx.delete(f"{unchanged.url}/vet"), 405, "method-not-allowed")


def test_a_repo_never_vetted_is_404_at_the_gate_with_how_to_vet(unchanged: Live) -> None:
    answer = httpx.get(f"{unchanged.url}/gate", params={"repo": NVIDIA, "revision": "a" * 40})
    assert answer.status_code == 404 and answer.json()["status"] == "not-vetted"
    assert "hfvet vet" in answer.json()["reasons"][0]
