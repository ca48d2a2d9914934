"""The review queue: a reviewer's approval flips the gate, a reader gets no buttons, a forged post is refused."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.integration.browser.pages import gate_status, listed_repos, log_in
from tests.integration.browser.world import MIRROR, VENDOR_REVIEW, World

REASON = "mirror of nvidia's upload, byte-identical weights; template change read and harmless"


def queued(page: Page, repo: str, sha: str):  # type: ignore[no-untyped-def]
    return page.locator(f'[data-testid="review-row"][data-repo="{repo}"][data-sha="{sha}"]')


def test_a_reviewer_approves_a_queued_third_party_revision_and_the_gate_flips(page: Page, world: World) -> None:
    sha = world.shas["mirror-v2"]
    assert gate_status(world, MIRROR, sha) == 403
    log_in(page, world, "reviewer")
    page.goto(f"{world.url}/ui/reviews")
    row = queued(page, MIRROR, sha)
    expect(row).to_contain_text("third-party")
    row.get_by_label("Reason").fill(REASON)
    row.get_by_test_id("approve").click()
    expect(page.get_by_test_id("flash")).to_be_visible()
    expect(queued(page, MIRROR, sha)).to_have_count(0)
    expect(page.get_by_test_id("audit-row").filter(has_text=REASON)).to_have_count(1)
    assert gate_status(world, MIRROR, sha) == 200
    page.goto(f"{world.url}/ui/")
    assert MIRROR in listed_repos(page)  # now deployable, by the reviewer's decision
    expect(page.locator(f'[data-testid="approved-row"][data-repo="{MIRROR}"]')).to_contain_text("reviewer-1")


def test_a_reader_sees_the_queue_but_no_review_buttons(page: Page, world: World) -> None:
    log_in(page, world, "reader")
    page.goto(f"{world.url}/ui/reviews")
    expect(queued(page, VENDOR_REVIEW, world.shas[VENDOR_REVIEW])).to_have_count(1)
    expect(page.get_by_test_id("approve")).to_have_count(0)
    expect(page.get_by_test_id("reject")).to_have_count(0)
    expect(page.locator('textarea[name="reason"]')).to_have_count(0)
    expect(page.get_by_text("Reviewing needs the reviewer role; you are reader.")).to_be_visible()


def test_a_forged_review_post_without_the_csrf_token_is_refused(page: Page, world: World) -> None:
    sha = world.shas[VENDOR_REVIEW]
    log_in(page, world, "reviewer")  # the forger rides on a real reviewer's session cookie
    form = {"repo": VENDOR_REVIEW, "revision": sha, "decision": "approve", "reason": "forged"}
    missing = page.request.post(f"{world.url}/ui/reviews", form=form)
    wrong = page.request.post(f"{world.url}/ui/reviews", form=form | {"csrf": "not-the-session-token"})
    assert (missing.status, wrong.status) == (403, 403)
    assert gate_status(world, VENDOR_REVIEW, sha) == 403
    page.goto(f"{world.url}/ui/reviews")
    expect(queued(page, VENDOR_REVIEW, sha)).to_have_count(1)  # still waiting for a real decision
    expect(page.get_by_test_id("audit-row").filter(has_text="forged")).to_have_count(0)
