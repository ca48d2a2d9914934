"""Renderers: one per --format choice, each a whole document for the same report."""

from __future__ import annotations

import json

from app.cli.options import OutputFormat
from app.core import report_json
from app.core.findings import Severity
from app.core.pipeline import vet
from app.core.scanners.load_closure_scanner import LoadClosureScanner
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


def test_text_renderer_lists_the_load_closure_per_runtime() -> None:
    handler = b"class EndpointHandler:\n    def __init__(self, path):\n        pass\n"
    card = b"tok = AutoTokenizer.from_pretrained('someone/tok', trust_remote_code=True)\n"
    report = vet(MemorySource({"handler.py": handler, "README.md": card}), [LoadClosureScanner()])
    text = RENDERERS["text"].render(report)
    assert "load closure" in text
    assert "  endpoints\n" in text and "code handler.py" in text and "EndpointHandler.__call__" in text
    assert "  transformers\n" in text and "repo someone/tok (unpinned), with trust_remote_code" in text
    again = report_json.load(json.loads(RENDERERS["json"].render(report)))
    assert again.closure == report.closure and len(report.closure) == 2
