"""Commands load by name: help still lists them all, each one loads, and a single command loads alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from app.cli.main import COMMANDS, app, load_command

ROOT = Path(__file__).resolve().parents[3]


def test_help_lists_every_command_with_its_summary() -> None:
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    listed = [line.split()[1] for line in result.stdout.splitlines() if line.startswith("│ ") and len(line.split()) > 2]
    assert [name for name in listed if name in COMMANDS] == list(COMMANDS)
    assert "Exit 0 and print the approved 40-hex commit" in result.stdout


def test_every_registered_command_loads_under_its_name() -> None:
    for name in COMMANDS:
        assert load_command(name).name == name


def test_an_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["nope"])
    assert result.exit_code == 2 and "No such command" in result.output


def test_one_command_imports_only_its_own_module() -> None:
    probe = ("import sys\nfrom app.cli.main import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.startswith('app.cli.')))")
    result = subprocess.run([sys.executable, "-c", probe, "hub", "--help"], cwd=ROOT, capture_output=True,
                            text=True, timeout=60, check=False)
    loaded = result.stdout.strip().splitlines()[-1]
    assert "app.cli.hub" in loaded and "app.cli.vet" not in loaded and "app.cli.policy" not in loaded, loaded
