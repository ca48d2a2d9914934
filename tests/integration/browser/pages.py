"""What the browser tests do on the dashboard's pages, by the test ids of docs/dashboard.md."""

from __future__ import annotations

import httpx
from playwright.sync_api import Page, expect

from tests.integration.browser.world import World


def log_in(page: Page, world: World, role: str) -> None:
    """Through the login form, as a person would: paste the token, submit, land on a page naming you."""
    page.goto(f"{world.url}/ui/login")
    page.get_by_label("API token").fill(world.tokens[role])
    page.get_by_test_id("login").get_by_role("button", name="Log in").click()
    expect(page.get_by_test_id("whoami")).to_have_text(f"{role}-1 ({role})")


def listed_repos(page: Page, testid: str = "approved-row") -> list[str]:
    return [row.get_attribute("data-repo") or "" for row in page.get_by_test_id(testid).all()]


def gate_status(world: World, repo: str, revision: str) -> int:
    """What a deploy script sees: GET /gate for one exact commit."""
    return httpx.get(f"{world.url}/gate", params={"repo": repo, "revision": revision}, timeout=30).status_code
