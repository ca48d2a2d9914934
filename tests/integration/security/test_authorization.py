"""The authorization matrix: every route of the app x every role and no token, against a table.

The routes are enumerated from the app itself, so a new route without a row here fails
`test_every_route_has_a_row`. Each request is a well-formed one (so that a 2xx shows the role may
act); the table is what each principal gets. Logs are captured through the whole run and, with
every answer, searched for every secret the server holds.
"""

from __future__ import annotations

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
    ("POST", "/reviews"): REVIEW,
    ("POST", "/webhooks/huggingface"): WEBHOOK,
    ("GET", "/healthz"): OPEN,
    ("GET", "/metrics"): OPEN,
}
# With HFVET_READ_AUTH=1 the reads of verdicts need a reader token; docs, health and metrics stay open.
READ_AUTH_REFUSED = {
    ("GET", "/vet/{job_id}"),
    ("GET", "/gate"),
    ("GET", "/repos"),
    ("GET", "/repos/{org}/{name}"),
    ("GET", "/policy"),
}


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
    headers = s.headers(role)
    sample: dict[tuple[str, str], dict[str, Any]] = {
        ("POST", "/vet"): {"params": {"repo": APPROVE_REPO, "revision": "main"}},
        ("GET", "/vet/{job_id}"): {"url": f"/vet/{s.job_id}"},
        ("GET", "/gate"): {"params": {"repo": APPROVE_REPO, "revision": vetted.approve.revision}},
        ("GET", "/repos/{org}/{name}"): {"url": f"/repos/{APPROVE_REPO}"},
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
        for method, path in sorted(routes(s.app)):
            expected = MATRIX[(method, path)][role]
            if read_auth and role is None and (method, path) in READ_AUTH_REFUSED:
                expected = 401
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
