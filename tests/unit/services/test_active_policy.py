"""One active policy everywhere: `scan` and `vet` decide under HFVET_POLICY unless --policy says otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli.main import app
from app.errors import InputError
from app.services.vetting import scan_local
from app.settings import Settings

runner = CliRunner()


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text("# hello\n")
    return tmp_path


def scan_policy(snapshot: Path, *args: str) -> str:
    result = runner.invoke(app, ["scan", str(snapshot), "--format", "json", *args])
    assert result.exit_code in (0, 1, 3), result.output
    return str(json.loads(result.stdout)["policy"]["name"])


def test_scan_without_policy_applies_the_shipped_default(snapshot: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HFVET_POLICY", raising=False)
    assert scan_policy(snapshot) == "default"


def test_hfvet_policy_drives_scan_and_policy_flag_wins(snapshot: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HFVET_POLICY", "strict")
    assert scan_policy(snapshot) == "strict"
    assert scan_policy(snapshot, "--policy", "default") == "default"


def test_the_interim_verdict_is_an_explicit_choice(snapshot: Path) -> None:
    assert scan_policy(snapshot, "--policy", "interim") == "interim-severity"
    report = scan_local(snapshot, settings=Settings(), policy_path=Path("interim"))
    assert report.decision.policy.sha256 is None


def test_interim_cannot_be_the_active_policy(snapshot: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match="--policy interim"):
        scan_local(snapshot, settings=Settings(policy=Path("interim")))
    monkeypatch.setenv("HFVET_POLICY", "interim")
    for command in (["scan", str(snapshot)], ["gate", "org/name", "--revision", "a" * 40]):
        result = runner.invoke(app, command)
        assert result.exit_code == 2 and "HFVET_POLICY=interim" in result.stderr, result.output


def test_a_broken_active_policy_fails_before_anything_is_scanned(
    snapshot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HFVET_POLICY", str(snapshot / "missing.yaml"))
    result = runner.invoke(app, ["scan", str(snapshot), "--format", "json"])
    assert result.exit_code == 2 and result.stdout == ""
    assert "missing.yaml" in "".join(result.stderr.split())  # rich wraps long paths at 80 columns
