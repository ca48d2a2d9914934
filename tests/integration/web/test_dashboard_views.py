"""What the dashboard shows beyond the lists (issue 27): hub links, full shas, severity summary and filter,
review cards, counts, recent vets, page sizes, and chat-template characters that fonts lack."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.server import create_app
from app.services.store import open_store
from app.settings import Settings
from tests.integration.api.stored import policy, report, save
from tests.integration.vetted import APPROVE_REPO, REJECT_REPO, REVIEW_REPO
from tests.integration.web.conftest import World, make_settings, no_hub


def attr(html: str, testid: str, name: str) -> list[str]:
    """The attribute ``name`` of each element with ``testid``, in page order."""
    tags = re.findall(rf'<[^<>]*\bdata-testid="{testid}"[^<>]*>', html)
    return [found.group(1) for tag in tags if (found := re.search(rf'\s{name}="([^"]*)"', tag))]


def error_status(html: str) -> str | None:
    found = re.search(r'data-testid="error" data-status="(\d+)"', html)
    return found.group(1) if found else None


def test_the_repo_page_links_the_commit_on_the_configured_hub(client: TestClient, world: World) -> None:
    sha = world.shas["reject"]
    html = client.get(f"/ui/repos/{REJECT_REPO}").text
    assert attr(html, "hub-link", "href") == [f"{world.hub_url}/{REJECT_REPO}/tree/{sha}"]
    assert f'href="{world.hub_url}/{REJECT_REPO}" data-testid="hub-repo-link"' in html


def test_the_hub_link_follows_hf_endpoint(world: World, tmp_path: Path) -> None:
    settings = make_settings(world, tmp_path, HF_ENDPOINT="https://mirror.example.test/hub/")
    with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver") as other:
        html = other.get(f"/ui/repos/{REJECT_REPO}").text
    sha = world.shas["reject"]
    assert attr(html, "hub-link", "href") == [f"https://mirror.example.test/hub/{REJECT_REPO}/tree/{sha}"]
    assert "huggingface.co" not in html


def test_every_commit_shows_short_with_its_full_sha_in_a_title_and_a_copy_button(client: TestClient,
                                                                                  world: World) -> None:
    html = client.get(f"/ui/repos/{APPROVE_REPO}").text
    for sha in (world.shas["approve"], world.shas["approve-v2"]):
        assert f'<code class="sha" title="{sha}">{sha[:12]}</code>' in html
    copied = attr(html, "copy-hash", "data-copy")
    assert {world.shas["approve"], world.shas["approve-v2"]} <= set(copied)
    assert all(re.fullmatch(r"[0-9a-f]{40}", sha) for sha in copied)
    reviews = client.get("/ui/reviews").text  # the queue and its recent decisions too
    assert world.shas["review"] in attr(reviews, "copy-hash", "data-copy")


def test_the_repo_page_counts_findings_by_severity(client: TestClient) -> None:
    html = client.get(f"/ui/repos/{REJECT_REPO}").text
    shown = Counter(attr(html, "finding", "data-severity"))
    summary = dict(zip(attr(html, "severity-count", "data-severity"), attr(html, "severity-count", "data-count"),
                       strict=True))
    assert list(summary) == ["critical", "high", "medium", "low", "info"]
    assert {level: int(n) for level, n in summary.items() if int(n)} == dict(shown)
    assert sum(shown.values()) > 1 and len(shown) > 1  # a filter has something to narrow


def test_the_severity_filter_shows_only_that_severity(client: TestClient, world: World) -> None:
    html = client.get(f"/ui/repos/{REJECT_REPO}").text
    counts = Counter(attr(html, "finding", "data-severity"))
    level, n = counts.most_common()[-1]
    links = attr(html, "severity-filter", "href")
    assert f"/ui/repos/{REJECT_REPO}?revision={world.shas['reject']}&amp;severity={level}#findings" in links
    filtered = client.get(f"/ui/repos/{REJECT_REPO}", params={"severity": level}).text
    assert attr(filtered, "finding", "data-severity") == [level] * n
    assert 'data-testid="severity-all"' in filtered and f"{n} {level}" in filtered
    refused = client.get(f"/ui/repos/{REJECT_REPO}", params={"severity": "dire"})
    assert refused.status_code == 422 and error_status(refused.text) == "422"
    assert "severity must be one of critical, high, medium, low, info" in refused.text


def test_a_review_card_shows_its_findings_count_and_links_the_diff(client: TestClient, settings: Settings) -> None:
    repo_page = client.get(f"/ui/repos/{REVIEW_REPO}").text
    findings = Counter(attr(repo_page, "finding", "data-severity"))
    assert findings  # the vendor repo with remote code has findings to count
    card = card_of(client.get("/ui/reviews").text, REVIEW_REPO)
    assert attr(card, "findings-count", "data-count") == [str(sum(findings.values()))]
    assert dict(zip(attr(card, "severity-count", "data-severity"), map(int, attr(card, "severity-count", "data-count")),
                    strict=True)) == dict(findings)
    assert 'data-testid="no-diff"' in card  # vetted at one commit only: nothing to compare


def test_a_review_card_of_a_second_commit_links_the_diff_with_the_one_before(settings: Settings) -> None:
    """A clean third-party repo vetted at two commits: each waits for a review; the newer one links the diff."""
    store = open_store(settings)
    repo, old, new = "someone/clean-model", "a" * 40, "b" * 40
    save(store, report(repo, old, under=policy("default")))
    save(store, report(repo, new, under=policy("default")))
    store.close()
    with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver") as client:
        html = client.get("/ui/reviews").text
    newer, older = card_of(html, repo, new), card_of(html, repo, old)
    assert attr(newer, "findings-count", "data-count") == ["0"]
    assert attr(newer, "review-diff-link", "href") == [f"/ui/repos/{repo}/diff?from={old}&amp;to={new}"]
    assert 'data-testid="no-diff"' in older and "review-diff-link" not in older


def card_of(html: str, repo: str, sha: str = "") -> str:
    start = f'data-testid="review-row" data-repo="{repo}" data-sha="{sha}'
    return html.split(start, 1)[1].split("</li>\n", 1)[0]


def test_home_counts_repos_commits_verdicts_and_pending_vets(client: TestClient) -> None:
    html = client.get("/ui/").text
    counts = {key: attr(html, f"count-{key}", "data-count") for key in
              ("repos", "commits", "approve", "review", "reject", "pending")}
    assert counts == {"repos": ["3"], "commits": ["4"], "approve": ["1"], "review": ["1"], "reject": ["1"],
                      "pending": ["0"]}
    assert 'href="/ui/vets"' in html  # the pending count leads to the recent vets


def test_home_says_1_repo_and_1_commit_vetted_in_the_singular(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'one.db'}", policy=Path("default"),
                        session_secret="test-session-key")
    store = open_store(settings)
    save(store, report("someone/one-model", "c" * 40, under=policy("default")))
    store.close()
    with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver") as client:
        html = client.get("/ui/").text
    assert "</strong> repo vetted" in html and "</strong> commit vetted" in html


def test_the_hub_creation_time_reads_like_every_other_time(client: TestClient) -> None:
    html = client.get(f"/ui/repos/{APPROVE_REPO}").text
    assert re.search(r"Created on the hub</dt><dd>\d{4}-\d\d-\d\d \d\d:\d\d UTC</dd>", html), html


@pytest.mark.parametrize("limit", [1, 2, 7, 200])
def test_home_honours_any_page_size_within_bounds(client: TestClient, limit: int) -> None:
    html = client.get("/ui/", params={"verdict": "any", "limit": limit}).text
    assert len(attr(html, "approved-row", "data-repo")) == min(limit, 3)
    assert f"<option selected>{limit}</option>" in html  # the form keeps it for the next query
    if limit < 3:
        assert 'data-testid="next-page"' in html and f"limit={limit}" in html


@pytest.mark.parametrize("limit", [0, -1, 201, 10_000])
def test_home_refuses_a_page_size_out_of_bounds(client: TestClient, limit: int) -> None:
    response = client.get("/ui/", params={"limit": limit})
    assert response.status_code == 422 and error_status(response.text) == "422"
    assert f"limit must be from 1 to 200 repos a page; {limit} is not." in response.text


def test_recent_vets_lists_the_newest_first_and_is_in_the_nav(client: TestClient, world: World) -> None:
    home = client.get("/ui/").text
    assert '<a href="/ui/vets">Recent vets</a>' in home
    html = client.get("/ui/vets").text
    shas = attr(html, "vet-row", "data-sha")
    assert shas == [world.shas[k] for k in ("approve-v2", "approve", "reject", "review")]
    assert attr(html, "vet-row", "data-verdict") == ["approve", "approve", "reject", "review"]
    assert 'data-testid="no-jobs"' in html  # these were stored straight, not by the server's jobs
    assert attr(client.get("/ui/vets", params={"limit": 2}).text, "vet-row", "data-sha") == shas[:2]
    refused = client.get("/ui/vets", params={"limit": 0})
    assert refused.status_code == 422 and "limit must be from 1 to 200 vets" in refused.text


def test_fullwidth_characters_of_a_chat_template_are_shown_as_marked_ascii(client: TestClient,
                                                                           world: World) -> None:
    """DeepSeek's `<\uff5cUser\uff5c>`: most fonts have no glyph for U+FF5C, which drew a box (tofu)."""
    html = client.get(f"/ui/repos/{APPROVE_REPO}/diff",
                      params={"from": world.shas["approve"], "to": world.shas["approve-v2"]}).text
    section = html.split('data-testid="template-diff"', 1)[1].split("</section>", 1)[0]
    assert "\uff5c" not in section
    assert '&lt;<abbr class="wide" title="U+FF5C FULLWIDTH VERTICAL LINE">|</abbr>User' in section


def test_the_repo_page_takes_the_short_commit_id_it_shows(client: TestClient, world: World) -> None:
    sha = world.shas["reject"]
    page = client.get(f"/ui/repos/{REJECT_REPO}", params={"revision": sha[:12]})
    assert page.status_code == 200 and sha in page.text
    refused = client.get(f"/ui/repos/{REJECT_REPO}", params={"revision": "main"})
    assert refused.status_code == 422 and "is not a commit sha" in refused.text
