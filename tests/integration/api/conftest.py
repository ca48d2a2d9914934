"""A live `hfvet serve` subprocess per test module (SQLite, and PostgreSQL when it is up), with the
fixture hub over the example repos behind it; or the API in process (`api`) over a hub of a test's own
(`example_hub`). Every server a fixture starts, it stops."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli.main import app as cli
from app.examples import build_examples
from app.hubfixture import AppServer, FixtureHub, create_app
from app.server import create_app as create_server
from app.settings import Settings
from tests.integration.api.inprocess import WEBHOOK_SECRET
from tests.integration.api.live import LiveServer, SlowHub, create_token, revoke_token, server_env
from tests.integration.db.conftest import backend_url

ROLES = ("reader", "vetter", "reviewer", "admin")


@dataclass
class Hub:
    app: SlowHub
    url: str
    root: Path


@dataclass
class Live:
    url: str
    store_url: str
    server: LiveServer
    tokens: dict[str, str] = field(default_factory=dict)

    def auth(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    root = tmp_path_factory.mktemp("api-hub")
    build_examples(root)
    slow = SlowHub(create_app(root))
    with AppServer(slow) as server:
        yield Hub(slow, server.url, root)


@pytest.fixture
def slow_hub(hub: Hub) -> Iterator[Hub]:
    """The hub, with a test free to slow its file reads; back to full speed afterwards."""
    yield hub
    hub.app.delay = 0.0


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from backend_url(request.param, tmp_path_factory.mktemp("api-store"))


def prepare_store(store_url: str) -> dict[str, str]:
    """Migrate the store and create one token per role, plus a revoked one, with the CLI."""
    result = CliRunner().invoke(cli, ["db", "upgrade"], env={"HFVET_DATABASE_URL": store_url})
    assert result.exit_code == 0, result.output
    tokens = {role: create_token(store_url, role, f"{role}-token") for role in ROLES}
    tokens["revoked"] = create_token(store_url, "admin", "revoked-token")
    revoke_token(store_url, "revoked-token")
    return tokens


def start_live(hub: Hub, store_url: str, home: Path) -> Iterator[Live]:
    tokens = prepare_store(store_url)
    server = LiveServer(server_env(hub.url, store_url, home), home / "serve.log")
    url = server.start()
    try:
        yield Live(url, store_url, server, tokens)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def live(hub: Hub, backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """A server per module and backend."""
    yield from start_live(hub, backend, tmp_path_factory.mktemp("live"))


@pytest.fixture(scope="module")
def sqlite_live(hub: Hub, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """A server on SQLite only, for tests whose subject is the HTTP surface, not the store."""
    home = tmp_path_factory.mktemp("live-sqlite")
    yield from start_live(hub, f"sqlite:///{home / 'store.db'}", home)


@pytest.fixture
def example_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The example repos served by a fixture hub of this test's own, and the environment `Settings()` reads
    for it: a fresh SQLite store, the webhook secret, the default policy. Yields the hub's folder, which a
    test may commit to."""
    root = tmp_path / "hub"
    build_examples(root)
    monkeypatch.setenv("HFVET_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    monkeypatch.setenv("HFVET_WEBHOOK_SECRET", WEBHOOK_SECRET)
    monkeypatch.setenv("HFVET_POLICY", "default")
    with FixtureHub(root) as served:
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        yield root


@pytest.fixture
def api(example_hub: Path) -> Iterator[TestClient]:
    """The API in process over `example_hub`."""
    with TestClient(create_server(Settings())) as client:
        yield client
