"""The Pulls page and a repo page's "Pulled by": who pulled which commit through the Hub endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.server import create_app
from app.services.pulls import record_pull
from app.services.store import open_store
from app.settings import Settings
from tests.integration.vetted import APPROVE_REPO, REJECT_REPO
from tests.integration.web.conftest import World, log_in, make_settings, no_hub
from tests.integration.web.test_dashboard_views import attr


@pytest.fixture
def pulled(settings: Settings, world: World) -> Iterator[TestClient]:
    """The dashboard over a store where `ci` pulled two files of the approved commit, `alice` one."""
    store = open_store(settings)
    sha = world.shas["approve"]
    record_pull(store, "ci", APPROVE_REPO, sha, "config.json", 1024, "upstream")
    record_pull(store, "ci", APPROVE_REPO, sha, "model.safetensors", 3 * 1024 * 1024, "upstream")
    record_pull(store, "alice", APPROVE_REPO, sha, "config.json", 1024, "cache")
    store.close()
    with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver") as client:
        yield client


def test_the_pulls_page_lists_who_pulled_which_commit_grouped_by_commit(pulled: TestClient, world: World) -> None:
    html = pulled.get("/ui/pulls").text
    sha = world.shas["approve"]
    assert attr(html, "pull-row", "data-actor") == ["alice", "ci"]  # the latest pull first
    assert attr(html, "pull-row", "data-repo") == [APPROVE_REPO, APPROVE_REPO]
    assert attr(html, "pull-row", "data-sha") == [sha, sha]
    assert attr(html, "pull-row", "data-files") == ["1", "2"]  # ci's two files are one row
    assert attr(html, "pull-row", "data-bytes") == ["1024", str(1024 + 3 * 1024 * 1024)]
    assert "3.0 MiB" in html and "1.0 KiB" in html  # sizes read as people read them
    assert f'<a href="/ui/repos/{APPROVE_REPO}">{APPROVE_REPO}</a>' in html
    assert attr(html, "copy-hash", "data-copy") == [sha, sha]  # the full sha, to copy
    assert f'<code class="sha" title="{sha}">{sha[:12]}</code>' in html
    assert 'data-testid="empty"' not in html


def test_the_pulls_page_is_in_the_nav_and_refuses_a_bad_page_size(pulled: TestClient) -> None:
    assert '<a href="/ui/pulls">Pulls</a>' in pulled.get("/ui/").text
    assert attr(pulled.get("/ui/pulls", params={"limit": 1}).text, "pull-row", "data-actor") == ["alice"]
    refused = pulled.get("/ui/pulls", params={"limit": 0})
    assert refused.status_code == 422 and "limit must be from 1 to 200 pulls" in refused.text


def test_the_repo_page_says_who_pulled_it_and_keeps_its_audit_trail_for_decisions(pulled: TestClient,
                                                                                 world: World) -> None:
    html = pulled.get(f"/ui/repos/{APPROVE_REPO}").text
    assert "Pulled by" in html and 'data-testid="no-pulls"' not in html
    assert attr(html, "pull-row", "data-actor") == ["alice", "ci"]
    assert attr(html, "pull-row", "data-files") == ["1", "2"]
    trail = html.partition('id="audit-h"')[2]
    assert trail and ">pull<" not in trail and "config.json" not in trail  # one row per file stays out of it
    other = pulled.get(f"/ui/repos/{REJECT_REPO}").text  # pulled by nobody
    assert 'data-testid="no-pulls"' in other and 'data-testid="pull-row"' not in other


def test_without_pulls_the_page_says_how_to_point_a_client_at_the_endpoint(client: TestClient) -> None:
    response = client.get("/ui/pulls")
    assert response.status_code == 200
    assert 'data-testid="empty"' in response.text and 'data-testid="pull-row"' not in response.text
    assert "HF_ENDPOINT=http://&lt;hfvet&gt;/hub" in response.text and "docs/endpoint.md" in response.text


def test_under_read_auth_the_pulls_page_needs_a_login_as_any_role(world: World, tmp_path: Path) -> None:
    settings = make_settings(world, tmp_path, read_auth=True)
    with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver",
                    follow_redirects=False) as client:
        response = client.get("/ui/pulls")
        assert response.status_code == 303 and response.headers["location"] == "/ui/login?next=/ui/pulls"
        log_in(client, world.secrets["reader"])
        assert client.get("/ui/pulls").status_code == 200
