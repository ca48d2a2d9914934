"""GET /gate's fast path (app.api.routes.gate_fast) answers exactly as the route does, or leaves it to the route.

The first request for a commit goes through FastAPI (a cache miss); the same request again is sent
by the fast path. Each test counts the fast path's answers and the route's calls into the gate, so
it knows which of the two answered.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY

from app import state as app_state
from app.api.routes import gate as gate_route
from app.api.routes import gate_fast as fastgate
from app.db import tokens
from app.db.models import ReviewRow
from app.db.session import Store, upgrade
from app.server import create_app
from app.services import gating
from app.settings import Settings
from app.sources.hub_errors import HubUnreachable
from tests.integration.api.stored import policy, report, save
from tests.integration.db.conftest import backend_url

SHA = "a" * 40
DEFAULT = policy("default")


@dataclass
class Counted:
    client: TestClient
    route_calls: list[str] = field(default_factory=list)
    fast_answers: list[int] = field(default_factory=list)

    def get(self, query: str, headers: dict[str, str] | None = None) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """Status, raw headers in order (what the ASGI app sent: no server or date header) and body."""
        response = self.client.get(f"/gate?{query}", headers=headers)
        return response.status_code, list(response.headers.raw), response.content


def counted_client(store: Store, monkeypatch: pytest.MonkeyPatch, **settings: object) -> Iterator[Counted]:
    app = create_app(Settings(database_url=store.url, **settings), resolve=_hub_down)  # type: ignore[arg-type]
    counted = Counted(TestClient(app))
    real = gating.cached_gate

    def spy(*args: object, **kwargs: object) -> gating.GateResult:
        counted.route_calls.append(str(args[1]))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    def fast(result: gating.GateResult) -> object:
        response = gate_route.gate_response(result)
        counted.fast_answers.append(response.status_code)
        return response

    monkeypatch.setattr(app_state, "cached_gate", spy)  # AppState.gate: the route's answer
    monkeypatch.setattr(fastgate, "gate_response", fast)
    with counted.client:
        yield counted


def _hub_down(repo: str, revision: str) -> str:
    raise HubUnreachable(f"test: no hub to resolve {repo}@{revision}")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A migrated store of its own: SQLite (the version asked on the event loop) and PostgreSQL (asked from
    a thread, one read shared by the requests asking at once: app.shared_reads)."""
    for url in backend_url(request.param, tmp_path):
        upgrade(url)
        opened = Store(url)
        yield opened
        opened.close()


@pytest.fixture
def gate(store: Store, monkeypatch: pytest.MonkeyPatch) -> Iterator[Counted]:
    yield from counted_client(store, monkeypatch)


def _review(store: Store, report_id: int, decision: str) -> None:
    with store.session() as session:
        session.add(ReviewRow(report_pk=report_id, decision=decision, reason="looked", reviewer="r", role="reviewer"))


@pytest.mark.parametrize(("repo", "text", "status", "expected"), [
    ("nvidia/model", b"fine", 200, "approved"),
    ("nvidia/model", b"EVIL", 403, "denied"),  # rejected
    ("canada-quant/model", b"fine", 403, "denied"),  # waiting for review: the policy never approves third parties
    ("nvidia/unvetted", None, 404, "not-vetted"),
])
def test_the_fast_path_sends_the_routes_answer_byte_for_byte(
    gate: Counted, store: Store, repo: str, text: bytes | None, status: int, expected: str
) -> None:
    if text is not None:
        save(store, report(repo, SHA, text, under=DEFAULT))
    query = f"repo={repo}&revision={SHA}"
    slow = gate.get(query)
    fast = gate.get(query)
    assert gate.route_calls == [repo] and gate.fast_answers == [status]  # the second came from the fast path
    assert fast == slow
    assert slow[0] == status and f'"status":"{expected}"'.encode() in slow[2]
    assert (b"content-type", b"application/json") in slow[1]


@pytest.mark.parametrize(("query", "status"), [
    (f"repo=not%20a%20repo&revision={SHA}", 422),  # invalid input is never cached, so never fast
    (f"repo={'n' * 300}/model&revision={SHA}", 422),  # over the length limit
    (f"repo=nvidia/model&revision={SHA}&revision=..", 422),  # the last revision counts, and it is bad
    ("revision=" + SHA, 422),  # no repo
    (f"repo=nvidia/model&revision={SHA.upper()}", 503),  # not a lowercase commit: a branch, on a hub that is down
    (f"repo=nvidia/model&revision={SHA}x", 503),
    ("repo=nvidia/model", 200),  # no revision: the newest approved commit, never cached
])
def test_requests_the_fast_path_cannot_answer_reach_fastapi_every_time(gate: Counted, store: Store, query: str,
                                                                       status: int) -> None:
    save(store, report("nvidia/model", SHA, under=DEFAULT))
    assert gate.get(f"repo=nvidia/model&revision={SHA}")[0] == 200  # the commit's answer is cached
    first, second = gate.get(query), gate.get(query)
    assert first == second and first[0] == status
    assert gate.fast_answers == []


def test_repeated_parameters_count_as_the_route_reads_them(gate: Counted, store: Store) -> None:
    save(store, report("nvidia/model", SHA, under=DEFAULT))
    save(store, report("nvidia/evil", SHA, b"EVIL", under=DEFAULT))
    assert gate.get(f"repo=nvidia/model&revision={SHA}")[0] == 200
    assert gate.get(f"repo=nvidia/evil&revision={SHA}")[0] == 403
    # Starlette keeps the last of repeated parameters, and so must the fast path.
    assert gate.get(f"repo=nvidia/model&repo=nvidia/evil&revision={SHA}")[0] == 403
    assert gate.get(f"repo=nvidia/evil&revision={SHA}&repo=nvidia/model")[0] == 200
    assert gate.get(f"repo=nvidia%2Fmodel&revision={SHA}")[0] == 200  # percent-encoded alike


def _token(store: Store, name: str, role: str = "reader", expires_at: datetime | None = None) -> dict[str, str]:
    with store.session() as session:
        return {"Authorization": f"Bearer {tokens.create(session, name, role, 'test', expires_at=expires_at)}"}


def _revoke(store: Store, name: str) -> None:
    with store.session() as session:
        assert tokens.revoke(session, name, actor="test")


@pytest.mark.parametrize("headers", [
    {"Authorization": "Bearer not-a-token"},
    {"Authorization": "Basic eDp5"},
    {"Authorization": "Bearer "},
    {"Authorization": ""},
])
def test_a_sent_token_that_is_not_live_is_refused_even_when_the_answer_is_cached(
    gate: Counted, store: Store, headers: dict[str, str]
) -> None:
    save(store, report("nvidia/model", SHA, under=DEFAULT))
    query = f"repo=nvidia/model&revision={SHA}"
    assert gate.get(query)[0] == gate.get(query)[0] == 200
    assert gate.get(query, headers)[0] == 401
    assert gate.fast_answers == [200]


def test_a_live_token_is_answered_fast_and_a_revoked_one_is_refused_at_once(gate: Counted, store: Store) -> None:
    save(store, report("nvidia/model", SHA, under=DEFAULT))
    query = f"repo=nvidia/model&revision={SHA}"
    vetter = _token(store, "ci", "vetter")
    slow, fast = gate.get(query, vetter), gate.get(query, vetter)
    assert slow == fast and slow[0] == 200 and gate.fast_answers == [200]
    _revoke(store, "ci")
    assert gate.get(query, vetter)[0] == 401
    assert gate.get(query)[0] == 200  # reads stay open without HFVET_READ_AUTH


def test_an_expired_token_is_refused_even_when_the_answer_is_cached(gate: Counted, store: Store) -> None:
    save(store, report("nvidia/model", SHA, under=DEFAULT))
    query = f"repo=nvidia/model&revision={SHA}"
    soon = _token(store, "soon", expires_at=datetime.now(UTC) + timedelta(seconds=2))
    expired = _token(store, "old", expires_at=datetime.now(UTC) - timedelta(seconds=1))
    assert gate.get(query, soon)[0] == gate.get(query, soon)[0] == 200
    assert gate.fast_answers == [200]  # a token with an expiry still ahead is answered fast
    refused = gate.client.get(f"/gate?{query}", headers=expired)
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "token-expired"
    time.sleep(2.1)
    assert gate.get(query, soon)[0] == 401  # expired meanwhile: refused at once
    assert gate.fast_answers == [200]


def test_read_auth_is_enforced_on_cached_answers(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    save(store, report("nvidia/model", SHA, under=DEFAULT))
    reader = _token(store, "ci")
    query = f"repo=nvidia/model&revision={SHA}"
    for gate in counted_client(store, monkeypatch, read_auth=True):
        assert gate.get(query, reader)[0] == gate.get(query, reader)[0] == 200  # the second, fast
        assert gate.fast_answers == [200]
        assert gate.get(query)[0] == 401
        assert gate.get(query, {"Authorization": "Bearer not-a-token"})[0] == 401
        # Two headers: the route reads the first, and so does the fast path.
        first_bad = [("authorization", "Bearer not-a-token"), ("authorization", reader["Authorization"])]
        assert gate.client.get(f"/gate?{query}", headers=first_bad).status_code == 401
        first_good = [("authorization", reader["Authorization"]), ("authorization", "Bearer not-a-token")]
        assert gate.client.get(f"/gate?{query}", headers=first_good).status_code == 200
        _revoke(store, "ci")
        assert gate.get(query, reader)[0] == 401  # a revoked token, at once


def test_answers_from_the_fast_path_are_counted(gate: Counted, store: Store) -> None:
    save(store, report("nvidia/model", SHA, under=DEFAULT))

    def approved() -> float:
        return REGISTRY.get_sample_value("hfvet_gate_answers_total", {"status": "approved"}) or 0.0

    before = approved()
    for _ in range(3):
        assert gate.get(f"repo=nvidia/model&revision={SHA}")[0] == 200
    assert approved() - before == 3
    assert len(gate.route_calls) == 1


def test_a_review_written_elsewhere_is_seen_by_the_very_next_answer(gate: Counted, store: Store) -> None:
    report_id = save(store, report("canada-quant/model", SHA, under=DEFAULT))
    query = f"repo=canada-quant/model&revision={SHA}"
    assert gate.get(query)[0] == gate.get(query)[0] == 403
    _review(store, report_id, "approve")  # another connection, as another process would
    assert gate.get(query)[0] == 200
    _review(store, report_id, "reject")
    assert gate.get(query)[0] == 403
    assert len(gate.route_calls) == 3  # each change was decided by the route, once


def test_a_vet_of_another_repo_keeps_the_answer_on_the_fast_path(gate: Counted, store: Store) -> None:
    save(store, report("nvidia/model", SHA, under=DEFAULT))
    query = f"repo=nvidia/model&revision={SHA}"
    first = gate.get(query)
    save(store, report("nvidia/other", SHA, b"EVIL", under=DEFAULT))  # the store version moves
    _review(store, save(store, report("canada-quant/x", SHA, under=DEFAULT)), "reject")
    assert gate.get(query) == first
    assert gate.route_calls == ["nvidia/model"] and gate.fast_answers == [200]  # re-stamped by the fast path


def test_a_vet_of_the_same_repo_leaves_the_answer_to_the_route(gate: Counted, store: Store) -> None:
    save(store, report("nvidia/model", SHA, under=DEFAULT))
    query = f"repo=nvidia/model&revision={SHA}"
    assert gate.get(query)[0] == 200
    save(store, report("nvidia/other", SHA, under=DEFAULT))
    save(store, report("nvidia/model", SHA, b"EVIL", under=DEFAULT))  # a re-vet that finds something
    assert gate.get(query)[0] == 403
    assert gate.route_calls == ["nvidia/model", "nvidia/model"] and gate.fast_answers == []


def test_an_oversized_body_is_refused_before_the_fast_path(gate: Counted, store: Store) -> None:
    save(store, report("nvidia/model", SHA, under=DEFAULT))
    query = f"repo=nvidia/model&revision={SHA}"
    assert gate.get(query)[0] == 200
    assert gate.get(query, {"Content-Length": str(2 * 1024 * 1024)})[0] == 413


def test_other_methods_and_paths_are_left_to_fastapi(gate: Counted, store: Store) -> None:
    save(store, report("nvidia/model", SHA, under=DEFAULT))
    query = f"repo=nvidia/model&revision={SHA}"
    assert gate.get(query)[0] == 200
    assert gate.client.post(f"/gate?{query}").status_code == 405
    assert gate.client.head(f"/gate?{query}").status_code == 405
    assert gate.client.get(f"/gate/?{query}", follow_redirects=False).status_code == 307


def test_a_store_the_fast_path_cannot_ask_leaves_the_answer_to_the_route(gate: Counted, store: Store) -> None:
    save(store, report("nvidia/model", SHA, under=DEFAULT))
    query = f"repo=nvidia/model&revision={SHA}"
    assert gate.get(query)[0] == 200
    probe = gate.client.app.state.hfvet.version  # type: ignore[attr-defined]
    probe.close()
    probe._engine = None  # the next ask cannot connect: as when the store is busy or gone
    assert gate.get(query)[0] == 200
    assert gate.fast_answers == [] and len(gate.route_calls) == 2


def test_on_sqlite_the_fast_path_restamps_on_the_loop_without_a_thread(gate: Counted, store: Store) -> None:
    """After each vet every connection's next request asks which repos were written: on SQLite that is one
    compiled statement on the probe's connection, not a thread hand-off holding the GIL the loop needs."""
    if store.engine.dialect.name != "sqlite":
        pytest.skip("SQLite only: PostgreSQL's round trip is made from a thread, shared (app.shared_reads)")
    save(store, report("nvidia/model", SHA, under=DEFAULT))
    query = f"repo=nvidia/model&revision={SHA}"
    first = gate.get(query)
    save(store, report("nvidia/other", SHA, under=DEFAULT))
    assert gate.get(query) == first and gate.fast_answers == [200]
    assert gate.client.app.state.hfvet.shared_written.reads == 0  # type: ignore[attr-defined]
