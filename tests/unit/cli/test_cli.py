import json
from pathlib import Path

from typer.testing import CliRunner

from app.cli.main import app

runner = CliRunner()


def test_scan_missing_path_exits_2_with_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["scan", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "no such file or directory" in result.output


def test_scan_json_follows_the_report_contract(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# hello\n")
    result = runner.invoke(app, ["scan", str(tmp_path), "--repo", "org/name", "--format", "json"])
    doc = json.loads(result.stdout)
    assert doc["repo"] == "org/name"
    assert doc["verdict"] in {"approve", "review", "reject"}
    assert result.exit_code == {"approve": 0, "reject": 1, "review": 3}[doc["verdict"]]
    assert doc["files"][0]["path"] == "README.md"


def test_scan_sarif_is_sarif_2_1_0(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\xff" * 8)
    result = runner.invoke(app, ["scan", str(tmp_path), "--format", "sarif"])
    doc = json.loads(result.stdout)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    assert run["tool"]["driver"]["name"] == "hfvet"
    assert run["results"], "an unvetted binary must show up as a result"
    assert all(r["ruleId"] == run["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] for r in run["results"])


def test_the_console_script_target_exists() -> None:
    import importlib
    import tomllib
    from pathlib import Path

    scripts = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, attr = scripts["hfvet"].partition(":")
    assert callable(getattr(importlib.import_module(module), attr))
