"""app/cli/console.py: the terminal's width on a terminal, no 80-column cut when piped."""

from __future__ import annotations

import io

import pytest
from rich.table import Table

from app.cli import console as console_module
from app.cli.console import PIPED_WIDTH, console

LONG_ID = "nvidia/DeepSeek-V4-Flash-NVFP4-" + "x" * 80


def printed(monkeypatch: pytest.MonkeyPatch) -> str:
    buffer = io.StringIO()
    monkeypatch.setattr("sys.stdout", buffer)
    table = Table("repo", "url")
    table.add_row(LONG_ID, f"https://huggingface.co/{LONG_ID}/resolve/main/model.safetensors")
    console().print(table)
    return buffer.getvalue()


def test_piped_output_keeps_ids_and_urls_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    text = printed(monkeypatch)
    assert LONG_ID in text and f"https://huggingface.co/{LONG_ID}/resolve/main/model.safetensors" in text
    assert max(len(line) for line in text.splitlines()) < 400  # as wide as the content, not PIPED_WIDTH


def test_columns_still_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    assert max(len(line) for line in printed(monkeypatch).splitlines()) <= 60


def test_a_terminal_keeps_its_own_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(console_module.Console, "is_terminal", property(lambda _self: True))
    assert console().width != PIPED_WIDTH


def test_no_colour_when_piped_and_none_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    assert console().color_system is None  # pytest captures stdout: not a terminal
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert console().no_color
