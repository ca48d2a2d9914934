"""Renderers: one per --format choice, each a whole document for the same report."""

from __future__ import annotations

import json

from app.cli.options import OutputFormat
from app.core import report_json
from app.core.findings import Severity
from app.core.pipeline import vet
from app.render import RENDERERS
from tests.fakes import MemorySource, TextScanner

REPORT = vet(MemorySource({"README.md": b"EVIL", "a.txt": b"ok"}), [TextScanner(Severity.HIGH)])


def test_format_choices_are_the_registered_renderers() -> None:
    assert [f.value for f in OutputFormat] == list(RENDERERS)


def test_every_renderer_returns_one_newline_terminated_document() -> None:
    for name, renderer in RENDERERS.items():
        text = renderer.render(REPORT)
        assert text.endswith("\n") and not text.endswith("\n\n"), name


def test_json_renderer_writes_the_codec_output() -> None:
    assert json.loads(RENDERERS["json"].render(REPORT)) == report_json.dump(REPORT)


def test_sarif_names_each_rule_and_result() -> None:
    doc = json.loads(RENDERERS["sarif"].render(REPORT))
    run = doc["runs"][0]
    assert doc["version"] == "2.1.0"
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["evil"]
    assert run["results"][0]["level"] == "error"


def test_text_renderer_is_plain_when_not_a_terminal() -> None:
    text = RENDERERS["text"].render(REPORT)
    assert "\x1b[" not in text
    assert "verdict: REJECT" in text and "README.md" in text and "evil" in text
