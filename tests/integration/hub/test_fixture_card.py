"""The fixture hub answers `cardData` from a README's front matter, as the Hub does, when `.hub.json` has none."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from huggingface_hub import HfApi

from app.hubfixture import FixtureHub
from app.hubfixture.card import MAX_FRONT_MATTER, parse_front_matter

READMES = {
    "plain": "---\nbase_model: acme/base\nlicense: apache-2.0\n---\n# plain\n",
    "listed": "\n---\r\nbase_model:\r\n  - acme/one\r\n  - acme/two\r\n---\r\n",
    "broken": "---\nbase_model: [acme/base\n---\n# broken\n",
    "scalar": "---\njust text\n---\n",
    "none": "# no front matter\nbase_model: acme/base\n",
    "declared": "---\nbase_model: acme/readme\n---\n",
}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HfApi]:
    root = tmp_path_factory.mktemp("cards")
    for name, text in READMES.items():
        (root / "acme" / name).mkdir(parents=True)
        (root / "acme" / name / "README.md").write_text(text, encoding="utf-8")
    (root / "acme" / "declared" / ".hub.json").write_text(json.dumps({"cardData": {"base_model": "acme/hubjson"}}))
    (root / "acme" / "nocard").mkdir()
    (root / "acme" / "nocard" / "config.json").write_text("{}")
    with FixtureHub(root) as hub:
        yield HfApi(endpoint=hub.url, token=False)


def _card(api: HfApi, name: str) -> dict[str, object] | None:
    info = api.model_info(f"acme/{name}")
    return info.card_data.to_dict() if info.card_data is not None else None  # type: ignore[no-untyped-call]


def test_readme_front_matter_is_the_card_data(api: HfApi) -> None:
    assert _card(api, "plain") == {"base_model": "acme/base", "license": "apache-2.0"}
    assert _card(api, "listed") == {"base_model": ["acme/one", "acme/two"]}


def test_hub_json_card_data_wins_over_the_readme(api: HfApi) -> None:
    assert _card(api, "declared") == {"base_model": "acme/hubjson"}


@pytest.mark.parametrize("name", ["broken", "scalar", "none", "nocard"])
def test_no_or_broken_front_matter_gives_no_card_data(api: HfApi, name: str) -> None:
    assert _card(api, name) is None


def test_expand_card_data_answers_it(api: HfApi) -> None:
    info = api.model_info("acme/plain", expand=["cardData"])  # type: ignore[list-item]
    assert info.card_data is not None and info.card_data.to_dict()["base_model"] == "acme/base"  # type: ignore[no-untyped-call]


def test_parse_is_bounded_and_json_ready() -> None:
    assert parse_front_matter("---\ndate: 2024-05-01\n---\n") == {"date": "2024-05-01"}
    bomb = "---\na: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n---\n"
    assert parse_front_matter(bomb) is None  # aliases refused: no expansion bombs
    assert parse_front_matter("---\nk: " + "v" * MAX_FRONT_MATTER + "\n---\n") is None
    assert parse_front_matter("---\n---\n") is None
