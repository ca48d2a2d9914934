"""The home page's filters, search and keyset pagination over a store of many repos."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.repository import save_report
from app.server import create_app
from app.services.store import open_store
from app.settings import Settings
from tests.integration.api.stored import policy, report
from tests.integration.web.conftest import no_hub

DEFAULT = policy("default")


def repos_of(html: str) -> list[str]:
    return re.findall(r'data-testid="approved-row" data-repo="([^"]+)"', html)


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 approved vendor repos, 10 rejected third-party ones (EVIL in the README is critical)."""
    path = tmp_path_factory.mktemp("many") / "store.db"
    store = open_store(Settings(database_url=f"sqlite:///{path}"))
    with store.session() as session:
        for i in range(60):
            save_report(session, report(f"nvidia/model-{i:02d}", f"{i:040x}", under=DEFAULT), requested_revision="main",
                        actor="test")
        for i in range(10):
            save_report(session, report(f"someone/bad-{i:02d}", f"{i + 100:040x}", b"EVIL", under=DEFAULT),
                        requested_revision="main", actor="test")
    store.close()
    return path


@pytest.fixture
def client(many: Path) -> Iterator[TestClient]:
    settings = Settings(database_url=f"sqlite:///{many}", policy=Path("default"))
    with TestClient(create_app(settings, resolve=no_hub), base_url="https://testserver") as test_client:
        yield test_client


def test_pages_follow_each_other_without_gaps_or_repeats(client: TestClient) -> None:
    seen: list[str] = []
    url: str | None = "/ui/?limit=25"
    while url:
        html = client.get(url).text
        seen += repos_of(html)
        found = re.search(r'<a href="([^"]+)" data-testid="next-page"', html)
        url = found.group(1).replace("&amp;", "&") if found else None
    assert seen == [f"nvidia/model-{i:02d}" for i in range(60)]


def test_the_next_page_keeps_the_filters(client: TestClient) -> None:
    html = client.get("/ui/", params={"q": "model-1", "limit": 25, "verdict": "any"}).text
    assert repos_of(html) == [f"nvidia/model-{i}" for i in range(10, 20)]
    assert 'data-testid="next-page"' not in html
    html = client.get("/ui/", params={"org": "NVIDIA", "limit": 25}).text  # org names are case-insensitive
    link = re.search(r'<a href="([^"]+)" data-testid="next-page"', html)
    assert link and "org=NVIDIA" in link.group(1) and "after=" in link.group(1)


def test_verdict_and_tier_filters(client: TestClient) -> None:
    rejected = repos_of(client.get("/ui/", params={"verdict": "reject"}).text)
    assert rejected == [f"someone/bad-{i:02d}" for i in range(10)]
    third = repos_of(client.get("/ui/", params={"tier": "third-party", "verdict": "any"}).text)
    assert third == rejected
    assert repos_of(client.get("/ui/", params={"tier": "third-party"}).text) == []  # none deployable
    vendor = repos_of(client.get("/ui/", params={"tier": "vendor-official", "limit": 100}).text)
    assert len(vendor) == 60


def test_search_is_literal_and_case_insensitive(client: TestClient) -> None:
    assert repos_of(client.get("/ui/", params={"q": "MODEL-05"}).text) == ["nvidia/model-05"]
    assert repos_of(client.get("/ui/", params={"q": "model_0"}).text) == []  # `_` is no LIKE wildcard here
    assert repos_of(client.get("/ui/", params={"q": "%"}).text) == []


def test_the_filters_form_has_the_named_inputs(client: TestClient) -> None:
    html = client.get("/ui/").text
    form = html.split('data-testid="filters"', 1)[1].split("</form>", 1)[0]
    for name in ("org", "tier", "verdict", "q"):
        assert f'name="{name}"' in form
