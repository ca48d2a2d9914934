"""No module under app/ is over 400 lines (issue 26): a longer one holds more than one responsibility
and is split by them. An exception is listed here with its reason, and goes once it no longer applies."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).parents[1]
MAX_LINES = 400
EXCEPTIONS: dict[str, str] = {}  # path: why it may stay longer (none today)


def _lines() -> dict[str, int]:
    return {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
            for path in sorted((ROOT / "app").rglob("*.py"))}


def test_no_module_is_over_the_limit_but_the_listed_exceptions() -> None:
    over = {path: n for path, n in _lines().items() if n > MAX_LINES and path not in EXCEPTIONS}
    assert over == {}, f"split these by responsibility (or list a justified exception): {over}"


def test_every_exception_still_applies() -> None:
    lines = _lines()
    stale = [path for path in EXCEPTIONS if lines.get(path, 0) <= MAX_LINES]
    assert stale == [], f"no longer over {MAX_LINES} lines (or gone): remove from EXCEPTIONS: {stale}"
