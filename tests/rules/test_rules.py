"""Every YARA rule compiles, carries its meta, matches its positive sample and not its benign one.

Samples are found by file name (``positive/<id>.txt``, ``benign/<id>.txt``); a rule without a
positive sample fails the suite. Samples are inert text: nothing here runs them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yara

from app.core.findings import Severity
from app.core.scanners.yara_scanner import RULES_DIR, YaraRulesError, _check_file, load_rules

HERE = Path(__file__).parent
RULE_FILES = sorted(RULES_DIR.glob("*.yar"))
RULE_IDS = [_check_file(p).id for p in RULE_FILES]


def _matches(path: Path, sample: Path) -> list[str]:
    rules = yara.compile(filepath=str(path))
    return [m.rule for m in rules.match(data=sample.read_bytes())]


def test_there_are_rules_for_every_threat_family() -> None:
    families = ("reverse-shell", "download-and-execute", "credential", "crypto-miner", "persistence")
    for family in families:
        assert any(rule_id.startswith(family) for rule_id in RULE_IDS), family


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_compiles_with_meta(path: Path) -> None:
    meta = _check_file(path)
    assert meta.name == path.stem
    assert meta.id == path.stem.replace("_", "-")
    assert meta.description
    assert meta.severity in set(Severity)


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_matches_its_positive_sample(path: Path) -> None:
    sample = HERE / "positive" / f"{_check_file(path).id}.txt"
    assert sample.is_file(), f"rule {path.stem} has no positive sample {sample.name}"
    assert _matches(path, sample) == [path.stem]


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_matches_its_positive_sample_in_utf16(path: Path) -> None:
    # Built from the ASCII sample here, never committed: PowerShell and Windows binaries hold UTF-16-LE.
    sample = (HERE / "positive" / f"{_check_file(path).id}.txt").read_text().encode("utf-16-le")
    rules = yara.compile(filepath=str(path))
    assert [m.rule for m in rules.match(data=sample)] == [path.stem]


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_ignores_its_benign_sample_in_utf16(path: Path) -> None:
    sample = (HERE / "benign" / f"{_check_file(path).id}.txt").read_text().encode("utf-16-le")
    assert yara.compile(filepath=str(path)).match(data=sample) == []


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_ignores_its_benign_sample(path: Path) -> None:
    sample = HERE / "benign" / f"{_check_file(path).id}.txt"
    assert sample.is_file(), f"rule {path.stem} has no benign sample {sample.name}"
    assert _matches(path, sample) == []


def test_benign_samples_match_no_rule_at_all() -> None:
    compiled, _ = load_rules()
    for sample in sorted((HERE / "benign").glob("*.txt")):
        assert [m.rule for m in compiled.match(data=sample.read_bytes())] == [], sample.name


def test_every_sample_belongs_to_a_rule() -> None:
    for folder in ("positive", "benign"):
        orphans = {p.stem for p in (HERE / folder).glob("*")} - set(RULE_IDS)
        assert not orphans, f"{folder} samples without a rule: {orphans}"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('rule one { meta: id="x" description="d" severity="high" condition: true }\n'
         'rule two { meta: id="y" description="d" severity="high" condition: true }', "exactly one rule"),
        ('rule other_name { meta: id="x" description="d" severity="high" condition: true }', "exactly one rule"),
        ('rule sample { meta: id="x" severity="high" condition: true }', "description"),
        ('rule sample { meta: id="x" description="d" severity="urgent" condition: true }', "unknown severity"),
        ("rule sample { condition: nonsense( }", "sample.yar"),
    ],
)
def test_rule_conventions_are_enforced(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "sample.yar"
    path.write_text(text)
    with pytest.raises(YaraRulesError, match=error):
        _check_file(path)


def test_an_empty_rules_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(YaraRulesError, match=r"no \.yar files"):
        load_rules(tmp_path)
