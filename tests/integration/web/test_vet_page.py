"""Vet a repo from the dashboard: the vetter's form queues a job; its page follows it to the verdict."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.server import create_app, hub_resolver
from app.settings import Settings
from tests.integration.vetted import REJECT_REPO
from tests.integration.web.conftest import World, csrf_of, log_in


@pytest.fixture
def hub_client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings, resolve=hub_resolver(settings)), base_url="https://testserver",
                    follow_redirects=False) as client:
        yield client


def submit(client: TestClient, repo: str, revision: str = "main") -> object:
    csrf = csrf_of(client.get("/ui/vet").text)
    return client.post("/ui/vet", data={"csrf": csrf, "repo": repo, "revision": revision})


def test_a_vetter_starts_a_vet_and_its_page_shows_the_verdict(hub_client: TestClient, world: World) -> None:
    log_in(hub_client, world.secrets["vetter"])
    response = submit(hub_client, REJECT_REPO)
    assert response.status_code == 303  # type: ignore[attr-defined]
    job_url = response.headers["location"]  # type: ignore[attr-defined]
    assert job_url.startswith("/ui/vet/")
    deadline = time.monotonic() + 120
    state = hub_client.get(f"{job_url}/status").json()
    while not state["finished"] and time.monotonic() < deadline:
        time.sleep(0.2)
        state = hub_client.get(f"{job_url}/status").json()
    assert state["status"] == "done" and state["verdict"] == "reject" and state["approved"] is False
    html = hub_client.get(job_url).text
    assert 'data-testid="job-status" data-status="done"' in html
    assert f"/ui/repos/{REJECT_REPO}?revision={world.shas['reject']}" in html
    assert "http-equiv=\"refresh\"" not in html  # a finished job's page stops refreshing


def test_a_running_job_page_refreshes_itself_without_javascript(hub_client: TestClient, world: World) -> None:
    log_in(hub_client, world.secrets["vetter"])
    job_url = submit(hub_client, REJECT_REPO).headers["location"]  # type: ignore[attr-defined]
    html = hub_client.get(job_url).text
    if 'data-status="done"' not in html:  # the vet may already be over on a fast machine
        assert '<noscript><meta http-equiv="refresh"' in html and 'data-poll="/ui/vet/' in html


def test_a_reader_may_not_vet(hub_client: TestClient, world: World) -> None:
    log_in(hub_client, world.secrets["reader"])
    assert "Vetting needs the vetter role" in hub_client.get("/ui/vet").text
    assert submit(hub_client, REJECT_REPO).status_code == 403  # type: ignore[attr-defined]


def test_an_unknown_repo_gets_an_error_page_and_queues_nothing(hub_client: TestClient, world: World) -> None:
    log_in(hub_client, world.secrets["vetter"])
    response = submit(hub_client, "nobody/nothing-here")
    assert response.status_code == 404  # type: ignore[attr-defined]
    assert 'data-testid="error"' in response.text  # type: ignore[attr-defined]
