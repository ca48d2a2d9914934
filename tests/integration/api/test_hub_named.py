"""An unreachable hub is named, with the setting that changes it, by the API and the CLI, at once.

On an offline machine without HF_ENDPOINT, POST /vet answered 503 after ~8 s of retried DNS failures,
naming neither the hub nor HF_ENDPOINT. The hub here is a name under `.invalid` (never resolves); the
attempts are counted, not timed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli.main import app as cli
from app.db import tokens
from app.server import create_app
from app.services.store import open_store
from app.settings import Settings
from tests.fakes import count_hub_sends

NOWHERE = "http://hfvet-no-such-host.invalid"


@pytest.fixture
def sends(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return count_hub_sends(monkeypatch)


def test_post_vet_names_the_hub_and_hf_endpoint_after_one_attempt(tmp_path: Path, sends: list[str]) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'store.db'}", HF_ENDPOINT=NOWHERE)
    store = open_store(settings)
    with store.session() as session:
        secret = tokens.create(session, "vetter-1", "vetter", actor="test")
    store.close()
    with TestClient(create_app(settings)) as client:
        answer = client.post("/vet", params={"repo": "nvidia/some-model"},
                             headers={"Authorization": f"Bearer {secret}"})
    assert answer.status_code == 503 and answer.json()["error"]["code"] == "hub-unreachable"
    message = answer.json()["error"]["message"]
    assert NOWHERE in message and "HF_ENDPOINT" in message and "does not resolve" in message
    assert len(sends) == 1


def test_vet_on_the_command_line_names_them_too(tmp_path: Path, sends: list[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HFVET_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    monkeypatch.setenv("HF_ENDPOINT", NOWHERE)
    result = CliRunner().invoke(cli, ["vet", "nvidia/some-model"])
    assert result.exit_code == 2
    said = result.stderr.replace("\n", "")
    assert NOWHERE in said and "HF_ENDPOINT" in said
    assert len(sends) == 1
