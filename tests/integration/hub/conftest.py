"""A fixture-hub root built at test time, served once per session on a loopback port."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from huggingface_hub import constants

from app.hubfixture import AppServer, FixtureHub, create_app
from tests.integration.hub.faults import FaultyHub
from tests.integration.hub.hubdata import PAGE_SIZE, build_root


@pytest.fixture(autouse=True)
def _isolated_client(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # huggingface_hub reads its settings at import time: patch the constants, not only the env.
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_IMPLICIT_TOKEN", False)
    # No developer token may leak in: only tokens a test sets explicitly are sent.
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", os.fspath(tmp_path / "no-token"))
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE", "HF_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="session")
def hub_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hubroot")
    build_root(root)
    return root


@pytest.fixture(scope="session")
def hub_url(hub_root: Path) -> Iterator[str]:
    with FixtureHub(hub_root, page_size=PAGE_SIZE) as hub:
        yield hub.url


@pytest.fixture
def cache_dir(tmp_path: Path) -> str:
    return os.fspath(tmp_path / "hf-cache")


@pytest.fixture(scope="module")
def faulty(hub_root: Path) -> Iterator[tuple[FaultyHub, str]]:
    app = FaultyHub(create_app(hub_root))
    with AppServer(app) as server:
        yield app, server.url


@pytest.fixture
def fault(faulty: tuple[FaultyHub, str]) -> Iterator[tuple[FaultyHub, str]]:
    """The faulty hub with no faults queued and no requests seen yet."""
    app, _ = faulty
    app.faults.clear()
    app.seen.clear()
    app.paths.clear()
    yield faulty
    app.faults.clear()
