"""The session cookie's codec: signed, tamper-evident, and a new CSRF token with every identity change."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from app.web.session import COOKIE, Sessions, WebSession


def request_with(cookie: str | None, scheme: str = "https") -> Request:
    headers = [(b"cookie", f"{COOKIE}={cookie}".encode())] if cookie else []
    return Request({"type": "http", "method": "GET", "path": "/ui/", "headers": headers, "scheme": scheme,
                    "server": ("testserver", 443), "query_string": b""})


def saved(sessions: Sessions, session: WebSession, scheme: str = "https") -> str:
    response = Response()
    sessions.save(request_with(None, scheme), response, session)
    header = response.headers["set-cookie"]
    return header.split(";", 1)[0].split("=", 1)[1]


def test_a_saved_session_loads_back() -> None:
    sessions = Sessions("key")
    session = sessions.load(request_with(None))
    session.log_in("digest-1")
    again = sessions.load(request_with(saved(sessions, session)))
    assert (again.csrf, again.session_id) == (session.csrf, "digest-1")


def test_another_key_or_an_edit_gives_a_fresh_session() -> None:
    session = WebSession("csrf-1", "digest-1", changed=True)
    value = saved(Sessions("key"), session)
    assert Sessions("other-key").load(request_with(value)).session_id is None
    tampered = value.replace(value[5], "A" if value[5] != "A" else "B", 1)
    assert Sessions("key").load(request_with(tampered)).session_id is None


def test_login_and_logout_rotate_the_csrf_token() -> None:
    session = WebSession("before")
    session.log_in("digest")
    assert session.csrf != "before" and session.changed
    during = session.csrf
    session.log_out()
    assert session.csrf != during and session.session_id is None


def test_csrf_check_needs_the_exact_token() -> None:
    session = WebSession("token")
    assert session.csrf_ok("token")
    assert not session.csrf_ok("") and not session.csrf_ok("toke") and not session.csrf_ok("token ")


def test_an_unchanged_session_sets_no_cookie() -> None:
    response = Response()
    Sessions("key").save(request_with(None), response, WebSession("csrf"))
    assert "set-cookie" not in response.headers
