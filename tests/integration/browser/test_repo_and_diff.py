"""The repo page of the rejected third-party quant, and a revision diff of a changed chat template."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.integration.browser.world import MIRROR, REJECTED, TEMPLATE_EDIT, World


def test_the_canada_quant_page_shows_its_findings_and_reasons(page: Page, world: World) -> None:
    page.goto(f"{world.url}/ui/")
    page.get_by_label("Verdict").select_option("any")
    page.get_by_test_id("apply-filters").click()
    page.get_by_role("link", name=REJECTED).click()
    expect(page).to_have_url(f"{world.url}/ui/repos/{REJECTED}")
    expect(page.get_by_test_id("identity")).to_contain_text("third-party")
    rules = {f.get_attribute("data-rule") for f in page.get_by_test_id("finding").all()}
    assert {"executable-binary", "forked-code", "binary-download"} <= rules
    binary = page.locator('[data-testid="finding"][data-rule="executable-binary"]').first
    expect(binary).to_have_attribute("data-path", "libfp8_moe.so")
    expect(page.get_by_test_id("file-row").and_(page.locator('[data-path="libfp8_moe.so"]'))).to_have_count(1)
    expect(page.get_by_test_id("reasons")).to_contain_text("third-party-dangerous-capability")
    history = page.get_by_test_id("revision-row")
    expect(history).to_have_attribute("data-sha", world.shas[REJECTED])
    expect(history).to_have_attribute("data-verdict", "reject")
    expect(page.get_by_test_id("identity").get_by_test_id("copy-sha")).to_have_count(0)  # never deployable


def test_a_revision_diff_shows_the_changed_chat_template(page: Page, world: World) -> None:
    page.goto(f"{world.url}/ui/repos/{MIRROR}")
    expect(page.get_by_test_id("revision-row")).to_have_count(2)
    page.get_by_test_id("diff-link").click()
    expect(page).to_have_url(
        f"{world.url}/ui/repos/{MIRROR}/diff?from={world.shas['mirror-v1']}&to={world.shas['mirror-v2']}"
    )
    template = page.locator('[data-testid="template-diff"][data-path="tokenizer_config.json"]')
    added = template.locator("span.add").filter(has_text="<|tool_prompt|>")
    expect(added).to_have_text("+" + TEMPLATE_EDIT.strip())  # the one added line, shown as added
    expect(template.locator("span.del")).to_have_count(0)  # the old template line is kept, as context
    expect(page.get_by_test_id("template-diff")).to_have_count(1)  # nothing else changed a template
    expect(page.get_by_test_id("verdict-before")).to_contain_text("review")
    expect(page.get_by_test_id("files-added")).not_to_contain_text("tokenizer_config.json")
