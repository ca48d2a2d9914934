"""The authorization matrix: every route of the app x every role and no token, against a table.

The routes are enumerated from the app itself, so a new route without a row here fails
`test_every_route_has_a_row`. Each request is a well-formed one (so that a 2xx shows the role may
act); the table is what each principal gets. Logs are captured through the whole run and, with
every answer, searched for every secret the server holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from app.db.models import AuditRow, ReviewRow
from app.services.store import open_store
from tests.integration.security.served import ROLES, Served, all_logs, every_secret, served
from tests.integration.vetted import APPROVE_REPO, REVIEW_REPO, Vetted, vet_examples

__all__ = ["all_logs"]
PRINCIPALS = (None, *ROLES)  # None: no token
OPEN = {p: 200 for p in PRINCIPALS}
WRITE = {None: 401, "reader": 403, "vetter": 202, "reviewer": 202, "admin": 202}
REVIEW = {None: 401, "reader": 403, "vetter": 403, "reviewer": 201, "admin": 201}
WEBHOOK = {p: 401 for p in PRINCIPALS}  # a bearer token is no substitute for the webhook's secret
UI_WRITE = {None: 401, "reader": 403, "vetter": 303, "reviewer": 303, "admin": 303}
UI_REVIEW = {None: 401, "reader": 403, "vetter": 403, "reviewer": 303, "admin": 303}

# (method, path template) -> what each principal gets, with HFVET_READ_AUTH off.
MATRIX: dict[tuple[str, str], dict[str | None, int]] = {
    ("GET", "/openapi.json"): OPEN,
    ("GET", "/docs"): OPEN,
    ("GET", "/docs/oauth2-redirect"): OPEN,
    ("GET", "/redoc"): OPEN,
    ("POST", "/vet"): WRITE,
    ("GET", "/vet/{job_id}"): OPEN,
    ("GET", "/gate"): OPEN,
    ("GET", "/repos"): OPEN,
    ("GET", "/repos/{org}/{name}"): OPEN,
    ("GET", "/policy"): OPEN,
    ("GET", "/bom/{org}/{name}/{commit}"): OPEN,
    # This server has no signing key (HFVET_ATTESTATION_KEY): both answer 404, to every principal alike.
    ("GET", "/attestations/{org}/{name}/{commit}"): {p: 404 for p in PRINCIPALS},
    ("GET", "/attestations/key"): {p: 404 for p in PRINCIPALS},
    ("POST", "/reviews"): REVIEW,
    ("POST", "/webhooks/huggingface"): WEBHOOK,
    ("GET", "/healthz"): OPEN,
    ("GET", "/metrics"): OPEN,
    # The dashboard (app/web): a principal is a logged-in session of that role; forms carry the session's csrf.
    ("GET", "/"): {p: 307 for p in PRINCIPALS},
    ("GET", "/ui"): {p: 307 for p in PRINCIPALS},
    ("GET", "/ui/"): OPEN,
    ("GET", "/ui/login"): OPEN,
    ("GET", "/ui/policy"): OPEN,
    ("GET", "/ui/repos/{org}/{name}"): OPEN,
    ("GET", "/ui/repos/{org}/{name}/diff"): OPEN,
    ("GET", "/ui/repos/{org}/{name}/reports/{report_id}.{kind}"): OPEN,
    ("GET", "/ui/repos/{org}/{name}/bom/{commit}.cdx.json"): OPEN,
    ("GET", "/ui/reviews"): OPEN,
    ("GET", "/ui/static"): OPEN,
    ("GET", "/ui/vet"): OPEN,
    ("GET", "/ui/vet/{job_id}"): OPEN,
    ("GET", "/ui/vets"): OPEN,
    ("GET", "/ui/pulls"): OPEN,
    ("GET", "/ui/vet/{job_id}/status"): OPEN,
    ("GET", "/ui/{rest:path}"): {p: 404 for p in PRINCIPALS},
    ("POST", "/ui/{rest:path}"): {p: 404 for p in PRINCIPALS},
    ("POST", "/ui/reviews"): UI_REVIEW,
    ("POST", "/ui/vet"): UI_WRITE,
    ("POST", "/ui/login"): {p: 303 for p in PRINCIPALS},  # logs in as the reader: sent last but one
    ("POST", "/ui/logout"): {p: 303 for p in PRINCIPALS},  # sent last
}
# With HFVET_READ_AUTH=1 the reads of verdicts need a reader token; docs, health and metrics stay open.
READ_AUTH_REFUSED = {
    ("GET", "/vet/{job_id}"),
    ("GET", "/gate"),
    ("GET", "/repos"),
    ("GET", "/repos/{org}/{name}"),
    ("GET", "/policy"),
    ("GET", "/bom/{org}/{name}/{commit}"),
    ("GET", "/attestations/{org}/{name}/{commit}"),
    ("GET", "/attestations/key"),
}
READ_AUTH_REFUSED |= {("POST", "/ui/{rest:path}")}  # a form post to no page: log in first
# ... and the dashboard's pages send a visitor without a session to the login form (303).
READ_AUTH_TO_LOGIN = {route for route, row in MATRIX.items() if route[0] == "GET" and route[1].startswith("/ui/")
                      and row == OPEN and route[1] not in ("/ui/login", "/ui/static")} | {("GET", "/ui/{rest:path}")}
LAST = (("POST", "/ui/login"), ("POST", "/ui/logout"))  # they change the session: after everything else
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture(scope="module")
def vetted(tmp_path_factory: pytest.TempPathFactory) -> Vetted:
    return vet_examples(tmp_path_factory.mktemp("hub"))


def routes(app: FastAPI) -> set[tuple[str, str]]:
    """(method, path) of every route the app answers, included routers and mounts too."""
    found: set[tuple[str, str]] = set()
    for route in app.routes:
        contexts = route.effective_route_contexts() if hasattr(route, "effective_route_contexts") else [route]
        for context in contexts:
            methods = getattr(context, "methods", None) or {"GET"}  # a mount (static files) answers GET
            found |= {(m, context.path) for m in methods if m != "HEAD"}
    return found


def request(s: Served, vetted: Vetted, method: str, path: str, role: str | None) -> Any:
    """A well-formed request for the route, sent as ``role``."""
    if path == "/" or path.startswith("/ui"):
        return _page_request(s, vetted, method, path)
    headers = s.headers(role)
    sample: dict[tuple[str, str], dict[str, Any]] = {
        ("POST", "/vet"): {"params": {"repo": APPROVE_REPO, "revision": "main"}},
        ("GET", "/vet/{job_id}"): {"url": f"/vet/{s.job_id}"},
        ("GET", "/gate"): {"params": {"repo": APPROVE_REPO, "revision": vetted.approve.revision}},
        ("GET", "/repos/{org}/{name}"): {"url": f"/repos/{APPROVE_REPO}"},
        ("GET", "/bom/{org}/{name}/{commit}"): {"url": f"/bom/{APPROVE_REPO}/{vetted.approve.revision}"},
        ("GET", "/attestations/{org}/{name}/{commit}"): {
            "url": f"/attestations/{APPROVE_REPO}/{vetted.approve.revision}"},
        ("POST", "/reviews"): {
            "json": {
                "repo": REVIEW_REPO,
                "revision": vetted.review.revision,
                "decision": "approve",
                "reason": "read the auto_map code",
            }
        },
        ("POST", "/webhooks/huggingface"): {"json": {"repo": {"type": "model", "name": APPROVE_REPO}}},
    }
    given = sample.get((method, path), {})
    url = given.pop("url", path)
    return s.client.request(method, url, headers=headers, **given)


def _page_request(s: Served, vetted: Vetted, method: str, path: str) -> Any:
    """A page request in the client's session (log in first: ``log_in``); a form gets the session's csrf."""
    csrf = CSRF.search(s.client.get("/ui/login").text).group(1) if method == "POST" else ""  # type: ignore[union-attr]
    sample: dict[tuple[str, str], dict[str, Any]] = {
        ("GET", "/ui/repos/{org}/{name}"): {"url": f"/ui/repos/{APPROVE_REPO}"},
        ("GET", "/ui/repos/{org}/{name}/diff"): {"url": f"/ui/repos/{APPROVE_REPO}/diff"},
        ("GET", "/ui/repos/{org}/{name}/reports/{report_id}.{kind}"): {
            "url": f"/ui/repos/{APPROVE_REPO}/reports/3.json"},
        ("GET", "/ui/repos/{org}/{name}/bom/{commit}.cdx.json"): {
            "url": f"/ui/repos/{APPROVE_REPO}/bom/{vetted.approve.revision}.cdx.json"},
        ("GET", "/ui/vet/{job_id}"): {"url": f"/ui/vet/{s.job_id}"},
        ("GET", "/ui/vet/{job_id}/status"): {"url": f"/ui/vet/{s.job_id}/status"},
        ("GET", "/ui/static"): {"url": "/ui/static/app.js"},
        ("GET", "/ui/{rest:path}"): {"url": "/ui/nowhere"},
        ("POST", "/ui/{rest:path}"): {"url": "/ui/nowhere", "data": {"csrf": csrf}},
        ("POST", "/ui/login"): {"data": {"token": s.secrets["reader"], "csrf": csrf}},
        ("POST", "/ui/logout"): {"data": {"csrf": csrf}},
        ("POST", "/ui/reviews"): {"data": {"repo": REVIEW_REPO, "revision": vetted.review.revision,  # API-approved
                                           "decision": "reject", "reason": "read the auto_map code", "csrf": csrf}},
        ("POST", "/ui/vet"): {"data": {"repo": APPROVE_REPO, "revision": "main", "csrf": csrf}},
    }
    given = dict(sample.get((method, path), {}))
    url = given.pop("url", path)
    return s.client.request(method, url, follow_redirects=False, **given)


def log_in(s: Served, role: str | None) -> None:
    """Give the client's session ``role`` (None: stay logged out), as a person does on /ui/login."""
    csrf = CSRF.search(s.client.get("/ui/login").text)
    assert csrf is not None
    if role is not None:
        answer = s.client.post("/ui/login", data={"token": s.secrets[role], "csrf": csrf.group(1)},
                               follow_redirects=False)
        assert answer.status_code == 303, answer.text[:300]


def in_order(found: set[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted(found - set(LAST)) + [r for r in LAST if r in found]


@pytest.fixture
def app_over(tmp_path: Path, vetted: Vetted) -> Iterator[Served]:
    with served(tmp_path, vetted) as s:
        yield s


def test_every_route_has_a_row(app_over: Served) -> None:
    assert routes(app_over.app) == set(MATRIX), "add the new route to MATRIX with what each role gets"


@pytest.mark.parametrize("read_auth", [False, True], ids=["open-reads", "read-auth"])
@pytest.mark.parametrize("role", PRINCIPALS, ids=[p or "no-token" for p in PRINCIPALS])
def test_each_principal_gets_what_the_table_says(
    tmp_path: Path, vetted: Vetted, role: str | None, read_auth: bool, all_logs: pytest.LogCaptureFixture
) -> None:
    got, wanted, seen = {}, {}, []
    with served(tmp_path, vetted, read_auth=read_auth) as s:  # a store per principal: reviews do not collide
        log_in(s, role)
        for method, path in in_order(routes(s.app)):
            expected = MATRIX[(method, path)][role]
            if read_auth and role is None and (method, path) in READ_AUTH_REFUSED:
                expected = 401
            if read_auth and role is None and (method, path) in READ_AUTH_TO_LOGIN:
                expected = 303
            answer = request(s, vetted, method, path, role)
            got[(method, path)], wanted[(method, path)] = answer.status_code, expected
            seen.append(answer.text + str(answer.headers))
        secrets = every_secret(s)
    assert got == wanted
    shown = "\n".join([*seen, all_logs.text, *(str(r.args) for r in all_logs.records)])
    assert [name for name, secret in secrets.items() if secret in shown] == []


def test_the_api_has_no_way_to_edit_or_delete_reviews_or_the_audit_log(app_over: Served) -> None:
    assert {m for m, _ in routes(app_over.app)} <= {"GET", "POST"}  # no PUT, PATCH or DELETE anywhere
    before = _counts(app_over)
    admin = app_over.headers("admin")
    tried = {
        (method, url): app_over.client.request(method, url, headers=admin, json={"decision": "reject"})
        for method in ("PUT", "PATCH", "DELETE")
        for url in ("/reviews", "/reviews/1", "/audit", "/audit/1", f"/repos/{APPROVE_REPO}")
    }
    assert {k: a.status_code for k, a in tried.items() if a.status_code not in (404, 405)} == {}
    assert _counts(app_over) == before


def _counts(s: Served) -> tuple[int, int]:
    store = open_store(s.settings)
    with store.session() as session:
        counted = (
            session.execute(select(func.count()).select_from(ReviewRow)).scalar_one(),
            session.execute(select(func.count()).select_from(AuditRow)).scalar_one(),
        )
    store.close()
    return counted
