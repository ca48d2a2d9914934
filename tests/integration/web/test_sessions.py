"""Logging in with an API token: the cookie's flags, what it holds, and when a session ends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.db import tokens
from app.db.models import WebSessionRow
from app.server import create_app
from app.services.store import open_store
from app.settings import Settings
from app.web.session import COOKIE
from tests.integration.web.conftest import World, csrf_of, log_in, make_settings, no_hub


def set_cookie_header(response: object) -> str:
    headers = response.headers.get_list("set-cookie")  # type: ignore[attr-defined]
    found = [h for h in headers if h.startswith(f"{COOKIE}=")]
    assert found, headers
    return str(found[-1])


def test_login_sets_a_signed_httponly_samesite_secure_cookie_without_the_secret(client: TestClient,
                                                                                 world: World) -> None:
    secret = world.secrets["reviewer"]
    csrf = csrf_of(client.get("/ui/login").text)
    response = client.post("/ui/login", data={"csrf": csrf, "token": secret})
    assert response.status_code == 303 and response.headers["location"] == "/ui/"
    cookie = set_cookie_header(response)
    flags = {part.strip().split("=")[0].lower() for part in cookie.split(";")}
    assert {"httponly", "secure", "samesite"} <= flags
    assert "samesite=lax" in cookie.lower() and "path=/ui" in cookie.lower()
    assert secret not in cookie
    assert 'data-testid="whoami">reviewer-1 (reviewer)<' in client.get("/ui/").text


def test_over_plain_http_the_cookie_is_not_marked_secure(settings: Settings) -> None:
    with TestClient(create_app(settings, resolve=no_hub), base_url="http://testserver") as client:
        cookie = set_cookie_header(client.get("/ui/login"))
    assert "secure" not in cookie.lower() and "httponly" in cookie.lower()


def test_a_wrong_token_is_refused_and_logs_nobody_in(client: TestClient) -> None:
    csrf = csrf_of(client.get("/ui/login").text)
    response = client.post("/ui/login", data={"csrf": csrf, "token": "hfv_not-a-token"})
    assert response.status_code == 401 and "unknown or revoked" in response.text
    assert 'data-testid="whoami"' not in client.get("/ui/").text


def test_a_tampered_cookie_counts_as_no_session(client: TestClient, world: World) -> None:
    log_in(client, world.secrets["admin"])
    value = client.cookies[COOKIE]
    client.cookies.clear()
    client.cookies.set(COOKIE, value[:-4] + ("AAAA" if not value.endswith("AAAA") else "BBBB"), path="/ui")
    assert 'data-testid="whoami"' not in client.get("/ui/").text


def test_revoking_the_token_ends_its_sessions(client: TestClient, world: World, settings: Settings) -> None:
    log_in(client, world.secrets["reviewer"])
    store = open_store(settings)
    with store.session() as session:
        assert tokens.revoke(session, "reviewer-1", actor="test")
    store.close()
    html = client.get("/ui/").text
    assert 'data-testid="whoami"' not in html and "no longer valid" in html


def test_logout_ends_the_session(client: TestClient, world: World) -> None:
    log_in(client, world.secrets["reviewer"])
    csrf = csrf_of(client.get("/ui/").text)
    assert client.post("/ui/logout", data={"csrf": csrf}).status_code == 303
    assert 'data-testid="whoami"' not in client.get("/ui/").text


def test_a_cookie_saved_before_logout_is_refused_after_it(client: TestClient, world: World) -> None:
    log_in(client, world.secrets["reviewer"])
    saved = client.cookies[COOKIE]
    csrf = csrf_of(client.get("/ui/").text)
    assert client.post("/ui/logout", data={"csrf": csrf}).status_code == 303
    client.cookies.clear()
    client.cookies.set(COOKIE, saved, path="/ui")  # a copy kept by whoever had the cookie
    assert 'data-testid="whoami"' not in client.get("/ui/").text


def test_a_cookie_saved_before_revocation_is_refused_and_its_session_deleted(client: TestClient, world: World,
                                                                              settings: Settings) -> None:
    log_in(client, world.secrets["reviewer"])
    saved = client.cookies[COOKIE]
    store = open_store(settings)
    with store.session() as session:
        assert session.execute(select(func.count()).select_from(WebSessionRow)).scalar_one() == 1
        assert tokens.revoke(session, "reviewer-1", actor="test")
        assert session.execute(select(func.count()).select_from(WebSessionRow)).scalar_one() == 0
    store.close()
    client.cookies.set(COOKIE, saved, path="/ui")
    assert 'data-testid="whoami"' not in client.get("/ui/").text


def test_a_session_outlives_a_restart_with_the_same_key_but_not_its_logout(settings: Settings,
                                                                            world: World) -> None:
    assert settings.session_secret is not None  # a set key: cookies outlive the process
    with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver",
                    follow_redirects=False) as first:
        log_in(first, world.secrets["reviewer"])
        saved = first.cookies[COOKIE]
    with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver",
                    follow_redirects=False) as second:
        second.cookies.set(COOKIE, saved, path="/ui")
        html = second.get("/ui/").text
        assert 'data-testid="whoami">reviewer-1 (reviewer)<' in html
        assert second.post("/ui/logout", data={"csrf": csrf_of(html)}).status_code == 303
    with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver",
                    follow_redirects=False) as third:
        third.cookies.set(COOKIE, saved, path="/ui")
        assert 'data-testid="whoami"' not in third.get("/ui/").text


def test_login_only_sends_back_to_a_dashboard_page(client: TestClient, world: World) -> None:
    csrf = csrf_of(client.get("/ui/login").text)
    response = client.post("/ui/login", data={"csrf": csrf, "token": world.secrets["reader"],
                                              "next": "https://evil.example/"})
    assert response.headers["location"] == "/ui/"


@pytest.fixture
def private_client(world: World, tmp_path: Path) -> Iterator[TestClient]:
    settings = make_settings(world, tmp_path, read_auth=True)
    with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver",
                    follow_redirects=False) as client:
        yield client


def test_with_read_auth_pages_need_a_login(private_client: TestClient, world: World) -> None:
    response = private_client.get("/ui/policy")
    assert response.status_code == 303 and response.headers["location"] == "/ui/login?next=/ui/policy"
    assert private_client.get("/ui/login").status_code == 200
    log_in(private_client, world.secrets["reader"])
    assert private_client.get("/ui/policy").status_code == 200
