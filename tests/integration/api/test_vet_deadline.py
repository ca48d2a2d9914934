"""The vets `hfvet serve` runs have a deadline by default (HFVET_VET_DEADLINE), like the CLI's:
a hub that never answers fails the job at that deadline, never an approval (issue 25, item 6).
`hfvet worker`s call the same `vet_remote` with the same settings and no limits of their own."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.jobs import VetJob
from app.db import tokens
from app.db.session import Store
from app.hubfixture import AppServer, create_app
from app.server import create_app as create_server
from app.services.vetting import job_vet
from app.settings import Settings
from app.sources.hub_errors import HubTimeout
from tests.integration.hub.faults import SilentHub

SHA = "b" * 40


@pytest.mark.parametrize("isolation", ["process", "thread"])
def test_a_server_vet_ends_at_the_deadline_setting(store: Store, tmp_path: Path, isolation: str) -> None:
    with store.session() as session:
        secret = tokens.create(session, "ci", "vetter", actor="test")
    silent = SilentHub(create_app(tmp_path), "/api/models/")  # model info is never answered
    with AppServer(silent) as hub:
        settings = Settings(database_url=store.url, hf_endpoint=hub.url, vet_deadline=2, job_isolation=isolation)
        with TestClient(create_server(settings, resolve=lambda repo, rev: SHA)) as client:
            answer = client.post("/vet", params={"repo": "acme/silent", "wait": 30},
                                 headers={"Authorization": f"Bearer {secret}"})
    body = answer.json()
    assert answer.status_code == 502, body  # failed: not 202 still running, never a verdict
    job = body["error"]["job"]
    assert job["status"] == "failed" and "the vet's 2s budget (--timeout, HFVET_VET_DEADLINE)" in job["error"], job
    # The setting ended it within the first unanswered request: the silence detection (about 20 s) would have
    # asked again after the 10 s read timeout, and the old retries many times more.
    assert silent.stalled == 1


def test_the_job_vet_of_the_workers_ends_at_the_deadline_setting(store: Store, tmp_path: Path) -> None:
    # `hfvet worker` and the server's queue both run job_vet (app/cli/worker.py, app/server.py).
    silent = SilentHub(create_app(tmp_path), "/api/models/")
    with AppServer(silent) as hub:
        settings = Settings(database_url=store.url, hf_endpoint=hub.url, vet_deadline=1)
        with pytest.raises(HubTimeout, match=re.escape("the vet's 1s budget (--timeout, HFVET_VET_DEADLINE)")):
            job_vet(settings, store)(job("acme/silent", SHA))
    assert silent.stalled == 1  # the setting ended it, not the silence detection (a second, retried request)


def job(repo: str, sha: str) -> VetJob:
    return VetJob(id="job", repo=repo, requested_revision="main", sha=sha, policy_name="default",
                  policy_sha256="", status="running", requested_by="test", created_at=datetime.now(UTC),
                  started_at=None, finished_at=None, attempts=1, error=None, report_id=None)
