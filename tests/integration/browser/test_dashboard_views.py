"""Issue 27's dashboard gaps, in a browser: hub links, copying a full sha, the severity filter, review cards
with their diff link, home counts and the recent vets, and a vet's job page ending on a verdict badge.

This file runs before test_reviews.py (one worker runs the browser tests in file order), so the mirror's
`v2` still waits for a review here.
"""

from __future__ import annotations

import re
from collections import Counter

from playwright.sync_api import Page, expect

from tests.integration.browser.pages import log_in
from tests.integration.browser.world import MIRROR, REJECTED, VETS, World


def test_the_repo_page_links_the_hub_and_copies_the_full_sha(page: Page, world: World) -> None:
    sha = world.shas[REJECTED]
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=world.url)
    page.goto(f"{world.url}/ui/repos/{REJECTED}")
    expect(page.get_by_test_id("hub-link")).to_have_attribute("href", f"{world.hub_url}/{REJECTED}/tree/{sha}")
    row = page.get_by_test_id("revision-row")
    expect(row.locator("code.sha")).to_have_text(sha[:12])
    expect(row.locator("code.sha")).to_have_attribute("title", sha)
    button = row.get_by_test_id("copy-hash")
    button.click()
    expect(button).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == sha


def test_the_severity_summary_filters_the_findings(page: Page, world: World) -> None:
    page.goto(f"{world.url}/ui/repos/{REJECTED}")
    every = Counter(f.get_attribute("data-severity") for f in page.get_by_test_id("finding").all())
    level, n = every.most_common()[-1]  # the rarest severity: the filter has the most to hide
    summary = page.get_by_test_id("severity-summary")
    expect(summary.locator(f'[data-testid="severity-count"][data-severity="{level}"]')).to_have_attribute(
        "data-count", str(n))
    summary.locator(f'[data-testid="severity-count"][data-severity="{level}"]').get_by_role("link").click()
    expect(page).to_have_url(re.compile(rf"[?&]severity={level}#findings$"))
    expect(page.get_by_test_id("finding")).to_have_count(n)
    assert {f.get_attribute("data-severity") for f in page.get_by_test_id("finding").all()} == {level}
    page.get_by_test_id("severity-all").click()
    expect(page.get_by_test_id("finding")).to_have_count(sum(every.values()))


def test_a_review_card_counts_findings_and_leads_to_the_diff(page: Page, world: World) -> None:
    page.goto(f"{world.url}/ui/reviews")
    card = page.locator(f'[data-testid="review-row"][data-repo="{MIRROR}"][data-sha="{world.shas["mirror-v2"]}"]')
    expect(card.get_by_test_id("findings-count")).to_have_attribute("data-count", re.compile(r"^\d+$"))
    card.get_by_test_id("review-diff-link").click()
    expect(page).to_have_url(
        f"{world.url}/ui/repos/{MIRROR}/diff?from={world.shas['mirror-v1']}&to={world.shas['mirror-v2']}")
    expect(page.get_by_test_id("template-diff")).to_have_count(1)


def test_home_counts_and_the_recent_vets_page(page: Page, world: World) -> None:
    page.goto(f"{world.url}/ui/")
    repos = len({repo for _, repo, _ in VETS})
    expect(page.get_by_test_id("count-repos")).to_have_attribute("data-count", str(repos))
    expect(page.get_by_test_id("count-commits")).to_have_attribute("data-count", str(repos + 1))  # mirror: 2
    page.get_by_test_id("nav").get_by_role("link", name="Recent vets").click()
    expect(page).to_have_url(f"{world.url}/ui/vets")
    vetted = {row.get_attribute("data-repo") for row in page.get_by_test_id("vet-row").all()}
    assert vetted >= {repo for _, repo, _ in VETS}
    expect(page.get_by_test_id("job-row").filter(has=page.locator(".badge.done")).first).to_be_visible()


def test_a_vet_from_the_form_ends_on_a_verdict_badge_with_links(page: Page, world: World) -> None:
    log_in(page, world, "vetter")
    page.goto(f"{world.url}/ui/vet")
    page.get_by_label("Repo (org/name)").fill(REJECTED)
    page.get_by_test_id("vet-form").get_by_role("button", name="Vet").click()
    expect(page).to_have_url(re.compile(r"/ui/vet/[0-9a-f]+$"))
    verdict = page.get_by_test_id("job-verdict")  # the script reloads the page when the job ends
    expect(verdict).to_have_attribute("data-verdict", "reject", timeout=120_000)
    expect(verdict.locator(".badge.reject")).to_have_text("reject")
    expect(page.get_by_test_id("job-status")).to_have_attribute("data-status", "done")
    sha = world.shas[REJECTED]
    expect(page.get_by_test_id("hub-link")).to_have_attribute("href", f"{world.hub_url}/{REJECTED}/tree/{sha}")
    page.get_by_test_id("job-report-link").click()
    expect(page).to_have_url(f"{world.url}/ui/repos/{REJECTED}?revision={sha}")
