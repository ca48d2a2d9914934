"""The shared archive member name check (zip, tar and 7z walks all use it)."""

from __future__ import annotations

import pytest

from app.core.formats.member_names import DuplicateNames, collision_key, unsafe_reason


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("safe.txt\x00../../x", "NUL byte"),
        ("/etc/passwd", "absolute"),
        ("\\Windows\\x.dll", "absolute"),
        ("C:x", "drive-letter"),
        ("d:/x", "drive-letter"),
        ("a/../../x", "'..'"),
        ("a\\..\\x", "'..'"),
        ("..", "'..'"),
    ],
)
def test_unsafe_forms(name: str, reason: str) -> None:
    found = unsafe_reason(name)
    assert found is not None
    assert reason in found


@pytest.mark.parametrize("name", ["a.txt", "dir/", "a..b", "...", "x/..y", "./a", "C_x:y"])
def test_ordinary_names(name: str) -> None:
    assert unsafe_reason(name) is None


def test_duplicates_are_compared_as_extraction_paths() -> None:
    names = DuplicateNames()
    assert [names.seen_before(n) for n in ("a/b", "a//b", "./a/b", "a\\b", "a/b/", "a/c")] == [
        False, True, True, True, True, False,
    ]
    assert collision_key("./x/./y//") == "x/y"
