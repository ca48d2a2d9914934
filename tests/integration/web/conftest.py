"""A store of real vets of the example repos (plus a second revision with a changed chat template),
served by the fixture hub, and an in-process client of create_app for the dashboard's pages."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.report import Report
from app.db import tokens
from app.db.repository import save_report
from app.examples import build_examples
from app.hubfixture import FixtureHub
from app.server import create_app
from app.services.store import open_store
from app.services.vetting import vet_remote
from app.settings import Settings
from tests.integration.vetted import APPROVE_REPO, REJECT_REPO, REVIEW_REPO

ROLES = ("reader", "vetter", "reviewer", "admin")
TEMPLATE_EDIT = "{{ '<|changed in v2|>' }}"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass(frozen=True)
class World:
    hub_url: str
    store_file: Path
    secrets: dict[str, str]
    shas: dict[str, str]  # "review", "reject", "approve", "approve-v2" -> the vetted commit
    strict_review: Report  # the `review` repo vetted under the strict policy (a reject there), not stored


def add_template_revision(root: Path, repo_id: str, branch: str) -> None:
    """A branch of ``repo_id`` whose tokenizer_config.json carries an edited chat template."""
    repo = root / repo_id
    target = repo / ".revisions" / branch
    shutil.copytree(repo, target, ignore=shutil.ignore_patterns(".revisions", ".hub.json"))
    config_path = target / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config["chat_template"] = config["chat_template"] + TEMPLATE_EDIT
    config_path.write_text(json.dumps(config, indent=2))


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("web-hub")
    build_examples(root)
    add_template_revision(root, APPROVE_REPO, "v2")
    store_file = tmp_path_factory.mktemp("web-store") / "store.db"
    with FixtureHub(root) as hub:
        settings = Settings(HF_ENDPOINT=hub.url, database_url=f"sqlite:///{store_file}", policy=Path("default"))
        store = open_store(settings)
        shas = {}
        for key, repo, revision in (("review", REVIEW_REPO, "main"), ("reject", REJECT_REPO, "main"),
                                    ("approve", APPROVE_REPO, "main"), ("approve-v2", APPROVE_REPO, "v2")):
            report = vet_remote(repo, settings=settings, revision=revision, policy_path=Path("default"))
            with store.session() as session:
                save_report(session, report, requested_revision=revision, actor="test")
            shas[key] = report.revision or ""
        with store.session() as session:
            secrets = {role: tokens.create(session, f"{role}-1", role, actor="test") for role in ROLES}
        store.close()
        strict = vet_remote(REVIEW_REPO, settings=settings, policy_path=Path("strict"))
        yield World(hub.url, store_file, secrets, shas, strict)


def make_settings(world: World, tmp_path: Path, **changes: object) -> Settings:
    """Settings over a copy of the world's store: each test may write to its own."""
    copy = tmp_path / "store.db"
    shutil.copy(world.store_file, copy)
    values: dict[str, object] = {"HF_ENDPOINT": world.hub_url, "database_url": f"sqlite:///{copy}",
                                 "policy": Path("default"), "session_secret": "test-session-key"}
    return Settings(**(values | changes))  # type: ignore[arg-type]


def no_hub(repo: str, revision: str) -> str:
    raise AssertionError(f"this page must not resolve {repo}@{revision} on the hub")


@pytest.fixture
def settings(world: World, tmp_path: Path) -> Settings:
    return make_settings(world, tmp_path)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver",
                    follow_redirects=False) as test_client:
        yield test_client


def csrf_of(html: str) -> str:
    found = _CSRF.search(html)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


def log_in(client: TestClient, secret: str) -> None:
    token_csrf = csrf_of(client.get("/ui/login").text)
    response = client.post("/ui/login", data={"csrf": token_csrf, "token": secret})
    assert response.status_code == 303, response.text
