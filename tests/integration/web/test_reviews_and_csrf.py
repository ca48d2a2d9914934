"""The review queue: who sees the buttons, forged posts refused, a reviewer's approval flipping the gate."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.db.models import AuditRow, ReviewRow
from app.db.repository import save_report
from app.services.store import open_store
from app.settings import Settings
from tests.integration.vetted import REVIEW_REPO
from tests.integration.web.conftest import World, csrf_of, log_in


def review_rows(settings: Settings) -> int:
    store = open_store(settings)
    with store.session() as session:
        count = session.execute(select(func.count()).select_from(ReviewRow)).scalar_one()
    store.close()
    return int(count)


def decide(client: TestClient, world: World, decision: str, reason: str = "read the auto_map code",
           csrf: str | None = None) -> object:
    token = csrf if csrf is not None else csrf_of(client.get("/ui/reviews").text)
    return client.post("/ui/reviews", data={"csrf": token, "repo": REVIEW_REPO, "revision": world.shas["review"],
                                            "decision": decision, "reason": reason})


def test_the_queue_lists_the_review_verdict_with_its_reasons(client: TestClient, world: World) -> None:
    html = client.get("/ui/reviews").text
    assert re.findall(r'data-testid="review-row" data-repo="([^"]+)" data-sha="([^"]+)"', html) == [
        (REVIEW_REPO, world.shas["review"])]
    assert "auto_map" in html


def test_a_reader_sees_no_review_buttons(client: TestClient, world: World) -> None:
    assert 'data-testid="approve"' not in client.get("/ui/reviews").text  # anonymous
    log_in(client, world.secrets["reader"])
    html = client.get("/ui/reviews").text
    assert 'data-testid="review-row"' in html
    assert 'data-testid="approve"' not in html and 'data-testid="reject"' not in html
    assert 'name="reason"' not in html


def test_a_reviewer_approves_and_the_gate_flips(client: TestClient, world: World, settings: Settings) -> None:
    sha = world.shas["review"]
    assert client.get("/gate", params={"repo": REVIEW_REPO, "revision": sha}).status_code == 403
    log_in(client, world.secrets["reviewer"])
    html = client.get("/ui/reviews").text
    assert 'data-testid="approve"' in html and 'name="reason"' in html
    response = decide(client, world, "approve")
    assert response.status_code == 303  # type: ignore[attr-defined]
    gate = client.get("/gate", params={"repo": REVIEW_REPO, "revision": sha})
    assert gate.status_code == 200 and gate.json()["decided_by"] == "token:reviewer-1 (reviewer)"
    after = client.get("/ui/reviews").text
    assert 'data-testid="review-row"' not in after and "flash" in after
    assert 'data-testid="audit-row"' in after and "read the auto_map code" in after
    assert REVIEW_REPO in [m for m in re.findall(r'data-repo="([^"]+)"', client.get("/ui/").text)]


def test_a_reject_keeps_the_gate_closed_and_leaves_the_queue(client: TestClient, world: World,
                                                             settings: Settings) -> None:
    log_in(client, world.secrets["reviewer"])
    assert decide(client, world, "reject", "not today").status_code == 303  # type: ignore[attr-defined]
    assert client.get("/gate", params={"repo": REVIEW_REPO, "revision": world.shas["review"]}).status_code == 403
    assert 'data-testid="review-row"' not in client.get("/ui/reviews").text
    assert review_rows(settings) == 1


def test_a_decision_needs_a_reason(client: TestClient, world: World, settings: Settings) -> None:
    log_in(client, world.secrets["reviewer"])
    response = decide(client, world, "approve", reason="   ")
    assert response.status_code == 422 and "needs a reason" in response.text  # type: ignore[attr-defined]
    assert review_rows(settings) == 0


def test_a_vetter_may_not_review(client: TestClient, world: World, settings: Settings) -> None:
    log_in(client, world.secrets["vetter"])
    assert decide(client, world, "approve").status_code == 403  # type: ignore[attr-defined]
    assert review_rows(settings) == 0


def test_a_forged_post_without_the_csrf_token_is_refused_and_changes_nothing(client: TestClient, world: World,
                                                                             settings: Settings) -> None:
    log_in(client, world.secrets["reviewer"])
    for forged in ("", "not-the-session-token"):
        response = decide(client, world, "approve", csrf=forged)
        assert response.status_code == 403 and 'data-status="403"' in response.text  # type: ignore[attr-defined]
    assert review_rows(settings) == 0
    assert client.get("/gate", params={"repo": REVIEW_REPO, "revision": world.shas["review"]}).status_code == 403


def test_a_csrf_token_of_another_session_is_refused(client: TestClient, world: World, settings: Settings) -> None:
    other = csrf_of(client.get("/ui/login").text)
    client.cookies.clear()
    log_in(client, world.secrets["reviewer"])  # a new session, with its own token
    assert decide(client, world, "approve", csrf=other).status_code == 403  # type: ignore[attr-defined]
    assert review_rows(settings) == 0


def test_login_and_logout_forms_check_csrf_too(client: TestClient, world: World) -> None:
    client.get("/ui/login")
    assert client.post("/ui/login", data={"token": world.secrets["admin"]}).status_code == 403
    assert 'data-testid="whoami"' not in client.get("/ui/").text


def test_the_repo_page_shows_the_decisions_audit_trail(client: TestClient, world: World,
                                                        settings: Settings) -> None:
    log_in(client, world.secrets["reviewer"])
    decide(client, world, "approve", "checked configuration.py by hand")
    html = client.get(f"/ui/repos/{REVIEW_REPO}").text
    trail = re.findall(r'<tr data-testid="audit-row">(.*?)</tr>', html, re.S)
    assert any("token:reviewer-1" in row and "checked configuration.py by hand" in row for row in trail)
    assert any(">vet<" in row for row in trail)
    store = open_store(settings)
    with store.session() as session:
        assert session.execute(select(func.count()).select_from(AuditRow).where(AuditRow.action == "review")
                               ).scalar_one() == 1
    store.close()


def test_a_report_recorded_under_another_policy_queues_by_its_verdict_under_the_active_one(
        client: TestClient, world: World, settings: Settings) -> None:
    store = open_store(settings)
    with store.session() as session:  # the newest report of the commit: `reject` under strict, `review` under default
        save_report(session, world.strict_review, requested_revision="main", actor="test")
    store.close()
    html = client.get("/ui/reviews").text
    assert re.findall(r'data-testid="review-row" data-repo="([^"]+)"', html) == [REVIEW_REPO]
    assert "remote-code-auto-map" in html  # the reason the active policy gives, not the strict one
