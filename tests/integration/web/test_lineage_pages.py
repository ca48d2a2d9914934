"""The repo page's lineage block and the diff page's "against its base" view, over a store vetted with lineage."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.session import Store, upgrade
from app.hubfixture import FixtureHub
from app.server import create_app
from app.services.vetting import record, vet_remote
from app.settings import Settings
from tests.integration import lineage_repos as repos
from tests.integration.web.conftest import no_hub


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("lineage-pages")
    repos.build_all(folder / "hub")
    url = f"sqlite:///{folder / 'store.db'}"
    upgrade(url)
    with FixtureHub(folder / "hub") as hub:
        settings = Settings(HF_ENDPOINT=hub.url, database_url=url, policy=Path("default"),
                            session_secret="test-session-key")
        store = Store(url)
        for repo in (repos.BASE, repos.VENDOR_QUANT, repos.MIRROR, repos.QUANT, repos.ORPHAN):
            report = vet_remote(repo, settings=settings, policy_path=Path("default"), store=store)
            record(store, report, requested_revision=None, actor="test")
        store.close()
        with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver",
                        follow_redirects=False) as test_client:
            yield test_client


def _block(html: str, testid: str) -> str:
    return html.split(f'data-testid="{testid}"', 1)[1].split("</dd>", 1)[0]


def test_the_repo_page_shows_a_mirror_with_its_counts(client: TestClient) -> None:
    html = client.get(f"/ui/repos/{repos.MIRROR}").text
    mirror = _block(html, "lineage-mirror")
    assert f">{repos.VENDOR_QUANT}</a> at" in mirror and "1 added" in mirror and "MIRROR.md" in mirror
    line = _line(html, "lineage-mirror")
    expected = rf"Mirror of {re.escape(repos.VENDOR_QUANT)} at [0-9a-f]{{7,12}}: \d+ of \d+ files identical, 1 added"
    assert re.match(expected, line), line  # the label reads once: not "Mirror of a mirror of"


def test_no_mirror_reads_plainly(client: TestClient) -> None:
    line = _line(client.get(f"/ui/repos/{repos.QUANT}").text, "lineage-mirror")
    assert line.startswith("Mirror of none: no approved vendor-official repo"), line


def _line(html: str, testid: str) -> str:
    """The label and value of a fact as a reader sees them, tags dropped."""
    label = html.split(f'data-testid="{testid}"', 1)[0].rsplit("<dt>", 1)[1].split("</dt>", 1)[0]
    value = _block(html, testid).split(">", 1)[1]
    return " ".join(re.sub(r"<[^>]+>", "", f"{label} {value}").split())


def test_the_repo_page_shows_the_base_claim_and_the_new_files(client: TestClient) -> None:
    html = client.get(f"/ui/repos/{repos.QUANT}").text
    assert 'data-status="verified"' in html
    said = "shares tokenizer, template and generation-config; same tensor names (5); dtypes differ"
    assert said in _block(html, "lineage-base")
    new = _block(html, "lineage-new")
    assert "<code>hf_quant_config.json</code>" in new and "tokenizer.json" not in new
    assert 'data-testid="base-diff-link"' in new


def test_the_repo_page_says_an_unvetted_base_cannot_be_checked(client: TestClient) -> None:
    html = client.get(f"/ui/repos/{repos.ORPHAN}").text
    assert "base someone/Unvetted-Base not vetted here: cannot check" in _block(html, "lineage-base")
    assert 'data-testid="lineage-new"' not in html


def test_the_diff_page_compares_a_commit_with_its_claimed_base(client: TestClient) -> None:
    html = client.get(f"/ui/repos/{repos.QUANT}/diff", params={"base": "1"}).text
    view = html.split('data-testid="base-diff"', 1)[1].split("</section>", 1)[0]
    identical = view.split('data-testid="base-identical"', 1)[1].split("</ul>", 1)[0]
    assert "tokenizer.json" in identical and "generation_config.json" in identical
    assert "hf_quant_config.json" in view.split('data-testid="base-added"', 1)[1].split("</ul>", 1)[0]
    assert "config.json" in view.split('data-testid="base-changed"', 1)[1].split("</ul>", 1)[0]
    missing = view.split('data-testid="base-missing"', 1)[1].split("</ul>", 1)[0]
    assert "model-00001-of-00002.safetensors" in missing  # the base's shards, resharded here
    assert 'data-testid="empty"' not in html
    form = html.split('<form method="get"', 1)[1].split("</form>", 1)[0]  # one commit here; no From/To pair
    assert 'name="base" value="1"' in form and 'name="from"' not in form and "Compare with its base" in form


def test_the_diff_page_says_when_the_base_is_not_vetted(client: TestClient) -> None:
    html = client.get(f"/ui/repos/{repos.ORPHAN}/diff", params={"base": "1"}).text
    assert 'data-testid="base-unvetted"' in html and "someone/Unvetted-Base" in html
