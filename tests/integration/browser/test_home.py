"""The approved-checkpoints page: what is deployable, and its filters and search."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.integration.browser.pages import listed_repos
from tests.integration.browser.world import APPROVED, MIRROR, REJECTED, VENDOR_REVIEW, World


def test_home_lists_the_approved_demo_repo_and_never_a_rejected_one(page: Page, world: World) -> None:
    page.goto(f"{world.url}/")  # the bare root redirects to the dashboard
    expect(page).to_have_url(f"{world.url}/ui/")
    listed = listed_repos(page)
    assert APPROVED in listed
    # Only the approved repo, or the mirror once the review test approved it; never a reject or a queued review.
    assert set(listed) <= {APPROVED, MIRROR}
    row = page.locator(f'[data-testid="approved-row"][data-repo="{APPROVED}"]')
    expect(row.get_by_test_id("copy-sha")).to_have_attribute("data-copy", world.shas[APPROVED])
    expect(row.get_by_test_id("copy-vllm")).to_have_attribute(
        "data-copy", f"vllm serve {APPROVED} --revision {world.shas[APPROVED]}"
    )
    assert REJECTED not in page.content()


def test_a_rejected_repo_shows_under_any_verdict_without_deploy_snippets(page: Page, world: World) -> None:
    page.goto(f"{world.url}/ui/")
    page.get_by_label("Verdict").select_option("any")
    page.get_by_test_id("apply-filters").click()
    expect(page).to_have_url(re.compile(r"/ui/\?.*\bverdict=any\b"))  # a GET form: the filter is in the URL
    assert {APPROVED, REJECTED, VENDOR_REVIEW, MIRROR} <= set(listed_repos(page))
    rejected = page.locator(f'[data-testid="approved-row"][data-repo="{REJECTED}"]')
    expect(rejected).to_have_attribute("data-verdict", "reject")
    expect(rejected.locator("[data-copy]")).to_have_count(0)


def test_org_and_verdict_filters_narrow_the_list(page: Page, world: World) -> None:
    page.goto(f"{world.url}/ui/?verdict=any")
    page.get_by_label("Org").fill("nvidia")
    page.get_by_label("Verdict").select_option("review")
    page.get_by_test_id("apply-filters").click()
    expect(page.get_by_test_id("approved-row")).to_have_count(1)
    assert listed_repos(page) == [VENDOR_REVIEW]
    page.get_by_label("Tier").select_option("third-party")
    page.get_by_label("Org").fill("")
    page.get_by_test_id("apply-filters").click()
    expect(page.get_by_test_id("approved-row")).to_have_count(1)
    assert listed_repos(page) == [MIRROR]  # the form keeps the verdict it was given
    expect(page.get_by_label("Verdict")).to_have_value("review")


def test_search_finds_repos_by_part_of_their_name(page: Page, world: World) -> None:
    page.goto(f"{world.url}/ui/?verdict=any")
    page.get_by_label("Search").fill("Flash-NVFP4")
    page.get_by_test_id("apply-filters").click()
    expect(page.get_by_test_id("approved-row")).to_have_count(3)
    assert set(listed_repos(page)) == {APPROVED, MIRROR, "nvldia/DeepSeek-V4-Flash-NVFP4"}
    page.get_by_label("Search").fill("no-such-model")
    page.get_by_test_id("apply-filters").click()
    expect(page.get_by_test_id("empty")).to_be_visible()
    expect(page.get_by_test_id("approved-row")).to_have_count(0)
