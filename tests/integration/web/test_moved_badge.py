"""After a rejected push the dashboard says what the gate says (issue 27 item 6): the repo stays listed with its
older approved commit, deployable by pin, and a badge says the branch moved to a rejected commit; the repo page
says it too. The rule: app.services.deployable (the gate's side: tests/integration/api/test_gate_moved.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.db.session import Store
from app.server import create_app
from app.settings import Settings
from tests.integration.api.stored import policy, report, save
from tests.integration.web.conftest import no_hub

REPO = "nvidia/model"
OLD, NEW = "a" * 40, "b" * 40


def client_of(store: Store) -> TestClient:
    return TestClient(create_app(Settings(database_url=store.url, policy="default"), resolve=no_hub),
                      base_url="https://testserver")


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    save(store, report(REPO, OLD, under=policy("default")), requested="main")
    save(store, report(REPO, NEW, b"EVIL", under=policy("default")), requested="main")  # main moved; rejected
    with client_of(store) as test_client:
        yield test_client


def row_of(html: str) -> str:
    found = re.search(r'<tr data-testid="approved-row" data-repo="nvidia/model".*?</tr>', html, re.S)
    assert found, "the repo is not listed"
    return found.group(0)


def test_the_home_page_keeps_the_repo_with_its_approved_commit_and_a_badge(client: TestClient) -> None:
    row = row_of(client.get("/ui/").text)  # the default filter: deployable
    assert 'data-verdict="approved"' in row and f'data-copy="{OLD}"' in row
    assert f"--revision {OLD}" in row and NEW not in row.split('data-testid="moved-badge"')[0]
    badge = re.search(r'<span class="badge reject moved-badge" data-testid="moved-badge"[^>]*>([^<]+)</span>', row)
    assert badge and badge.group(1) == "main moved to a rejected commit"
    assert f'data-newest="{NEW}"' in row and f"main moved to {NEW}, which is rejected" in row  # its title


def test_the_reject_filter_shows_the_same_row(client: TestClient) -> None:
    row = row_of(client.get("/ui/?verdict=reject").text)  # the newest vet was a reject: listed there too
    assert 'data-testid="moved-badge"' in row and f'data-copy="{OLD}"' in row


def test_the_repo_page_says_the_branch_moved_and_names_both_commits(client: TestClient) -> None:
    html = client.get(f"/ui/repos/{REPO}").text
    notice = re.search(r'<p class="notice" data-testid="moved-notice">.*?</p>', html, re.S)
    assert notice, "no notice on the repo page"
    text = notice.group(0)
    assert "main moved to a rejected commit" in text and NEW in text and OLD in text and "deployable by pin" in text


def test_no_badge_when_the_newest_commit_is_approved(store: Store) -> None:
    save(store, report(REPO, OLD, b"EVIL", under=policy("default")), requested="main")
    save(store, report(REPO, NEW, under=policy("default")), requested="main")
    with client_of(store) as test_client:
        row = row_of(test_client.get("/ui/").text)
        page = test_client.get(f"/ui/repos/{REPO}").text
    assert f'data-copy="{NEW}"' in row and "moved-badge" not in row and "moved-notice" not in page


def test_a_repo_with_only_rejected_commits_is_not_deployable(store: Store) -> None:
    save(store, report(REPO, OLD, b"EVIL", under=policy("default")), requested="main")
    save(store, report(REPO, NEW, b"EVIL", under=policy("default")), requested="main")
    with client_of(store) as test_client:
        assert 'data-repo="nvidia/model"' not in test_client.get("/ui/").text
        assert "not deployable" in row_of(test_client.get("/ui/?verdict=any").text)
