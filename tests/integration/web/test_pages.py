"""Each dashboard page renders the stored vets (and helpful pages when there is nothing to show)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.server import create_app
from app.settings import Settings
from tests.integration.vetted import APPROVE_REPO, REJECT_REPO, REVIEW_REPO
from tests.integration.web.conftest import TEMPLATE_EDIT, World, no_hub


def rows(html: str, testid: str, attr: str = "data-repo") -> list[str]:
    return re.findall(rf'data-testid="{testid}"[^>]*?{attr}="([^"]+)"', html)


def test_root_redirects_to_the_dashboard(client: TestClient) -> None:
    assert client.get("/").headers["location"] == "/ui/"


def test_home_lists_deployable_repos_with_their_snippets_and_never_a_rejected_one(client: TestClient,
                                                                                   world: World) -> None:
    html = client.get("/ui/").text
    assert rows(html, "approved-row") == [APPROVE_REPO]
    sha = world.shas["approve-v2"]  # the newest approved commit of the repo
    assert f'data-copy="{sha}"' in html
    assert f'data-copy="hfvet download {APPROVE_REPO} --revision {sha} --local-dir ./' in html
    assert f'data-copy="vllm serve {APPROVE_REPO} --revision {sha}"' in html
    assert REJECT_REPO not in html


def test_home_with_any_verdict_shows_every_repo_but_deploy_snippets_only_for_the_approved(client: TestClient,
                                                                                          world: World) -> None:
    html = client.get("/ui/", params={"verdict": "any"}).text
    assert sorted(rows(html, "approved-row")) == sorted([APPROVE_REPO, REJECT_REPO, REVIEW_REPO])
    assert html.count('data-testid="copy-download"') == 1
    assert world.shas["reject"] not in re.findall(r'data-copy="([^"]+)"', html)


def test_repo_page_shows_identity_history_files_and_findings_by_rule(client: TestClient, world: World) -> None:
    html = client.get(f"/ui/repos/{REJECT_REPO}").text
    assert 'data-testid="identity"' in html
    assert rows(html, "revision-row", "data-sha") == [world.shas["reject"]]
    assert 'data-testid="file-row"' in html
    read = re.findall(r'data-testid="file-read">([^<]+)<', html)
    assert read and all(cell.strip() != "—" for cell in read)  # every file says how much of it hfvet read
    found = set(rows(html, "finding", "data-rule"))
    assert found and any(severity in html for severity in ('data-severity="critical"', 'data-severity="high"'))
    assert 'data-testid="reasons"' in html and "reject" in html


def test_repo_page_marks_a_branch_that_moved_on(client: TestClient, world: World) -> None:
    html = client.get(f"/ui/repos/{APPROVE_REPO}").text
    assert rows(html, "revision-row", "data-sha") == [world.shas["approve-v2"], world.shas["approve"]]
    assert ">v2<" in html and ">main<" in html


def test_report_downloads_as_json_and_sarif(client: TestClient, world: World) -> None:
    html = client.get(f"/ui/repos/{REJECT_REPO}").text
    json_link = re.search(r'href="([^"]+\.json)"[^>]*data-testid="download-json"', html)
    sarif_link = re.search(r'href="([^"]+\.sarif)"[^>]*data-testid="download-sarif"', html)
    assert json_link and sarif_link
    document = client.get(json_link.group(1))
    assert "attachment" in document.headers["content-disposition"]
    assert json.loads(document.text)["revision"] == world.shas["reject"]
    sarif = json.loads(client.get(sarif_link.group(1)).text)
    assert sarif["runs"][0]["results"]


def test_report_of_another_repo_is_not_served_under_this_one(client: TestClient) -> None:
    html = client.get(f"/ui/repos/{REJECT_REPO}").text
    report_id = re.search(r"/reports/(\d+)\.json", html)
    assert report_id
    assert client.get(f"/ui/repos/{APPROVE_REPO}/reports/{report_id.group(1)}.json").status_code == 404


def test_diff_shows_the_changed_chat_template_as_a_text_diff(client: TestClient, world: World) -> None:
    html = client.get(f"/ui/repos/{APPROVE_REPO}/diff",
                      params={"from": world.shas["approve"], "to": world.shas["approve-v2"]}).text
    section = html.split('data-testid="template-diff"', 1)[1].split("</section>", 1)[0]
    added = re.findall(r'<span class="add">(.*?)</span>', section)
    assert any("&lt;|changed in v2|&gt;" in line for line in added), TEMPLATE_EDIT
    marked = re.findall(r"<mark>(.*?)</mark>", section)  # where in the one long line it changed
    assert len(marked) == 1 and "changed in v2" in marked[0]
    assert 'data-testid="verdict-before"' in html and 'data-testid="verdict-after"' in html
    assert "No file added." in html


def test_diff_of_a_repo_with_one_revision_says_so(client: TestClient) -> None:
    html = client.get(f"/ui/repos/{REJECT_REPO}/diff").text
    assert 'data-testid="empty"' in html and "Only one revision" in html


def test_diff_without_a_hub_still_lists_the_changes_and_says_why_text_is_missing(world: World, tmp_path: Path) -> None:
    from tests.integration.web.conftest import make_settings

    settings = make_settings(world, tmp_path, HF_ENDPOINT="http://127.0.0.1:9")
    with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver") as client:
        html = client.get(f"/ui/repos/{APPROVE_REPO}/diff").text
    assert 'data-testid="template-diff"' in html and "could not read tokenizer_config.json" in html


def test_policy_page_names_the_active_policy_and_its_rules(client: TestClient) -> None:
    html = client.get("/ui/policy").text
    assert re.search(r'data-testid="policy-sha256">[0-9a-f]{64}<', html)
    assert 'data-testid="policy-name">default<' in html
    assert 'data-rule="remote-code-auto-map"' in html


@pytest.mark.parametrize("path", ["/ui/nowhere", "/ui/repos/nobody/nothing", "/ui/repos/a/b/diff",
                                  f"/ui/repos/{REJECT_REPO}?revision={'0' * 40}", "/ui/vet/no-such-job"])
def test_unknown_pages_and_repos_get_the_404_page(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert 'data-testid="error" data-status="404"' in response.text
    assert "Traceback" not in response.text


def test_malformed_input_gets_an_error_page_not_a_trace(client: TestClient) -> None:
    response = client.get(f"/ui/repos/{REJECT_REPO}", params={"revision": "not-a-sha"})
    assert response.status_code == 422 and 'data-testid="error"' in response.text
    assert client.get("/ui/", params={"after": "%%%"}).status_code == 422
    assert client.get("/ui/", params={"limit": "many"}).status_code == 422


@pytest.fixture
def empty_client(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'empty.db'}", policy=Path("default"))
    with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver") as client:
        yield client


def test_empty_store_renders_empty_states(empty_client: TestClient) -> None:
    home = empty_client.get("/ui/")
    assert home.status_code == 200 and 'data-testid="empty"' in home.text
    assert 'data-testid="approved-row"' not in home.text
    queue = empty_client.get("/ui/reviews")
    assert queue.status_code == 200 and "Nothing waits for a review" in queue.text
    assert empty_client.get("/ui/policy").status_code == 200
    assert empty_client.get(f"/ui/repos/{APPROVE_REPO}").status_code == 404


def test_pages_are_not_cached_and_cannot_be_framed_or_run_inline_script(client: TestClient) -> None:
    headers = client.get("/ui/").headers
    assert headers["cache-control"] == "no-store" and headers["x-frame-options"] == "DENY"
    assert "default-src 'self'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
