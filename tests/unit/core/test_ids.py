"""The id rules of app/core/ids.py, and that they are written nowhere else."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id  # type: ignore[attr-defined]  # public, lazily exported

from app.core.ids import (
    SHORT_COMMIT_PATTERN,
    is_commit,
    is_short_sha,
    not_found_hint,
    parse_org,
    parse_repo_id,
    parse_revision,
)

APP = Path(__file__).resolve().parents[3] / "app"
SHA = "0123456789abcdef0123456789abcdef01234567"

# These still spell the 40-hex pattern out; they are to follow (issue 26: another helper moves them).
TO_FOLLOW: set[str] = set()


def test_the_40_hex_pattern_is_written_only_in_core_ids() -> None:
    writers = {str(p.relative_to(APP)) for p in APP.rglob("*.py") if "{40}" in p.read_text(encoding="utf-8")}
    assert writers - TO_FOLLOW == {"core/ids.py"}


@pytest.mark.parametrize(("value", "commit", "short"), [
    (SHA, True, True),
    (SHA[:7], False, True),
    (SHA[:6], False, False),
    (SHA.upper(), False, False),
    (SHA + "0", False, False),
    ("main", False, False),
    (None, False, False),
])
def test_commit_and_short_sha(value: str | None, commit: bool, short: bool) -> None:
    assert is_commit(value) is commit
    assert is_short_sha(value) is short
    if value is not None:  # the schema's pattern (POST /reviews) says what the function accepts
        assert (re.fullmatch(SHORT_COMMIT_PATTERN, value) is not None) is short


@pytest.mark.parametrize("value", ["main", "v1.0", "refs/pr/1", SHA])
def test_parse_revision_accepts(value: str) -> None:
    assert parse_revision(value) == value


@pytest.mark.parametrize("value", ["", "-x", "a//b", "x/", "a..b", "x" * 257])
def test_parse_revision_refuses(value: str) -> None:
    with pytest.raises(ValueError, match="not a branch, tag or commit"):
        parse_revision(value)


# ORG/NAME ids the hub takes and refuses, the edges of each of validate_repo_id's rules among them.
HUB_IDS = [
    "nvidia/model", "a/b", "_org/_name_", "Org-1/Name.v2_x", "o/" + "n" * 96, "o" * 96 + "/n", "a.-b/c-.d",
    "a.git/b", "a/b.gi", "a/b.GIT", "0/0",
    "-org/name", "org/name-", "org./name", "org/.name", "a--b/c", "a/b--c", "a..b/c", "a/b..c", "a/b.git",
    "o/" + "n" * 97, "o" * 97 + "/n", "café/x", "x/文件夹", "org/na me", "org/", "/name", "", "a/b/c", "nvidia",
    "a-/-b", "a/b\n", " a/b", "a/b ", "a_/b", "a/b_",
]


def hub_accepts(repo_id: str) -> bool:
    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        return False
    return True


def accepts(parse: Callable[[str], str], value: str) -> bool:
    try:
        assert parse(value) == value
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("value", HUB_IDS)
def test_parse_repo_id_follows_validate_repo_id(value: str) -> None:
    """core.ids writes the hub's rules out (the core does not import huggingface_hub): the same answers,
    with the org required."""
    assert accepts(parse_repo_id, value) is (value.count("/") == 1 and hub_accepts(value))


@pytest.mark.parametrize("value", [v.partition("/")[0] for v in HUB_IDS] + ["a/b", "org"])
def test_parse_org_is_the_first_half_of_a_repo_id(value: str) -> None:
    assert accepts(parse_org, value) is ("/" not in value and hub_accepts(f"{value}/x"))


@pytest.mark.parametrize("value", ["a/b/c", "nvidia", "", "-org/name"])
def test_parse_repo_id_says_what_is_wrong(value: str) -> None:
    with pytest.raises(ValueError, match=r"(?i)repo"):
        parse_repo_id(value)


@pytest.mark.parametrize(("revision", "hint"), [
    ("9f0f", " (a short commit id needs 7 or more hex digits)"),
    ("9", " (a short commit id needs 7 or more hex digits)"),
    ("9f0f442", " (a short commit id must name a vetted commit; otherwise give the full 40-hex sha)"),
    ("9f0f442" + "0" * 32, " (a short commit id must name a vetted commit; otherwise give the full 40-hex sha)"),
    ("9" * 40, ""), ("main", ""), ("v1.0", ""),
])
def test_a_revision_the_hub_lacks_says_what_a_short_commit_id_needs(revision: str, hint: str) -> None:
    assert not_found_hint(revision) == hint
