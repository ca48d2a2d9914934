"""A database URL's credentials never reach the terminal, whatever command fails to open the store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli.child_server import free_port
from app.cli.main import app

ROOT = Path(__file__).resolve().parents[2]

URLS = [
    "postgresql+psycopg://hfvet:sEcReT-1@127.0.0.1:1/hfvet",  # port 1: refused at once
    "postgresql+psycopg://hfvet@127.0.0.1:1/hfvet?password=sEcReT-2",
    "postgresql+psycopg://127.0.0.1:1/hfvet?user=hfvet&password=sEcReT-3&sslmode=disable",
    "postgresql+psycopg://hfvet:sEcReT%40-4@127.0.0.1:1/hfvet",
]
COMMANDS = [["db", "upgrade"], ["token", "list"], ["token", "create", "--role", "reader", "--name", "x"],
            ["gate", "nvidia/x", "--revision", "a" * 40], ["serve", "--host", "0.0.0.0", "--port", "1"]]  # noqa: S104


@pytest.mark.parametrize("url", URLS)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_store_that_cannot_be_opened_is_named_without_its_credentials(url: str, command: list[str]) -> None:
    result = CliRunner().invoke(app, command, env={"HFVET_DATABASE_URL": url, "HFVET_SERVER": ""})
    shown = result.stdout + result.stderr
    assert result.exit_code == 2, shown
    assert "127.0.0.1:1" in shown  # the store is still named, so the user knows which one
    assert "HFVET_DATABASE_URL" in " ".join(shown.split()), shown  # and the setting that changes it
    assert "sEcReT" not in shown and "%40-4" not in shown, shown


def test_a_server_whose_store_cannot_be_opened_logs_no_credentials() -> None:
    """On loopback the store is first opened in the server's startup: its log must not quote the password."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HFVET_DATABASE_URL": URLS[0] + "?password=sEcReT-5"}
    done = subprocess.run([sys.executable, "-m", "app", "serve", "--port", str(free_port())], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr  # refused before the server starts: one line, no traceback
    assert "cannot open the store at postgresql+psycopg://hfvet:***@127.0.0.1:1" in done.stderr
    assert "Traceback" not in done.stderr
    assert "sEcReT" not in done.stdout + done.stderr


@pytest.mark.parametrize("command", [["gate", "nvidia/model"], ["token", "list"]])
def test_a_sqlite_folder_that_cannot_be_made_is_one_line_naming_the_store(tmp_path: Path, command: list[str]) -> None:
    in_the_way = tmp_path / "a-file"
    in_the_way.write_text("not a folder")
    url = f"sqlite:///{in_the_way / 'hfvet.db'}"
    result = CliRunner().invoke(app, command, env={"HFVET_DATABASE_URL": url, "HFVET_SERVER": ""})
    assert result.exit_code == 2, result.output  # an operational error, not a traceback (exit 1)
    assert "cannot open the store at" in result.stderr and "HFVET_DATABASE_URL" in result.stderr, result.stderr
    assert "Traceback" not in result.output
