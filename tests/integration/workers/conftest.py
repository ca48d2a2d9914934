"""The cluster tests' fixtures: a fresh PostgreSQL database, the fleet on a (slowable) fixture hub."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.hubfixture import AppServer, create_app
from tests.integration.api.conftest import Hub
from tests.integration.api.live import SlowHub
from tests.integration.db.conftest import postgres_url
from tests.integration.workers.cluster import build_fleet

FLEET = 140  # 100 for the hundred vets, the rest for the fault tests: every test vets repos of its own


@pytest.fixture(scope="module")
def shared_store() -> Iterator[str]:
    yield from postgres_url()


@pytest.fixture
def pg_store() -> Iterator[str]:
    yield from postgres_url()


@pytest.fixture(scope="module")
def fleet_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Hub, list[str]]]:
    root = tmp_path_factory.mktemp("fleet-hub")
    names = build_fleet(root, FLEET)
    slow = SlowHub(create_app(root))
    with AppServer(slow) as server:
        yield Hub(slow, server.url, root), names


@pytest.fixture
def hub(fleet_hub: tuple[Hub, list[str]]) -> Iterator[Hub]:
    yield fleet_hub[0]
    fleet_hub[0].app.delay = 0.0


@pytest.fixture(scope="module")
def fleet(fleet_hub: tuple[Hub, list[str]]) -> list[str]:
    return fleet_hub[1]
