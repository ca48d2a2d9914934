"""One live world and one Chromium per test session (per xdist worker); a fresh page, without cookies, per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.integration.browser.world import CHROMIUM, World, chromium, live_world

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here is `browser` (select with -m browser) and in one xdist group, so that with
    `--dist loadgroup` one worker builds the world once."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.xdist_group("browser"))


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with live_world(tmp_path_factory.mktemp("browser-world")) as live:
        yield live


@pytest.fixture(scope="session")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    # No skip when Chromium is missing: CI installs it (scripts/setup.sh), so its absence is a failure.
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: run `bash scripts/setup.sh dev` as root"
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as context:
        context.set_default_timeout(15_000)  # a shared, busy machine: waits are generous, never sleeps
        expect.set_options(timeout=15_000)
        yield context


@pytest.fixture
def page(browser_context: BrowserContext) -> Iterator[Page]:
    browser_context.clear_cookies()  # each test logs in as whom it needs
    tab = browser_context.new_page()
    yield tab
    tab.close()
