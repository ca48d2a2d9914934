"""A finished vet's job page: the verdict as a badge, and links to its report, its repo and the hub;
the job then shows on the recent vets page."""

from __future__ import annotations

import re
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


def finished_job(client: TestClient, repo: str) -> str:
    """Vet ``repo`` through the form and wait for the job to finish; returns the job page's URL."""
    csrf = csrf_of(client.get("/ui/vet").text)
    job_url = client.post("/ui/vet", data={"csrf": csrf, "repo": repo, "revision": "main"}).headers["location"]
    deadline = time.monotonic() + 120
    while not client.get(f"{job_url}/status").json()["finished"]:
        assert time.monotonic() < deadline, "the vet did not finish in 120 s"
        time.sleep(0.2)
    return str(job_url)


def test_a_finished_job_shows_its_verdict_as_a_badge_with_links(hub_client: TestClient, world: World) -> None:
    log_in(hub_client, world.secrets["vetter"])
    job_url = finished_job(hub_client, REJECT_REPO)
    html = hub_client.get(job_url).text
    sha = world.shas["reject"]
    verdict = html.split('data-testid="job-verdict"', 1)[1].split("</p>", 1)[0]
    assert 'data-verdict="reject"' in verdict and '<span class="badge reject">reject</span>' in verdict
    assert '<span class="badge status done" data-testid="job-state">done</span>' in html
    assert re.search(rf'href="/ui/repos/{REJECT_REPO}\?revision={sha}" data-testid="job-report-link"', html)
    assert f'href="/ui/repos/{REJECT_REPO}" data-testid="job-repo-link"' in html
    json_link = re.search(r'href="([^"]+\.json)" download data-testid="job-json"', html)
    assert json_link and hub_client.get(json_link.group(1)).json()["revision"] == sha
    assert f'href="{world.hub_url}/{REJECT_REPO}/tree/{sha}" data-testid="hub-link"' in html
    assert f'data-copy="{sha}"' in html  # the full sha, to copy

    vets = hub_client.get("/ui/vets").text  # the job heads the recent vets, and so does its report
    assert re.search(rf'data-testid="job-row" data-repo="{REJECT_REPO}" data-status="done"', vets)
    assert f'href="{job_url}"' in vets
    first = re.search(r'data-testid="vet-row" data-repo="([^"]+)" data-sha="([^"]+)"', vets)
    assert first and first.groups() == (REJECT_REPO, sha)
