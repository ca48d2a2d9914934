"""StagingScanner: card and script lines that decode or preload a file the repo ships."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.findings import Finding
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners.staging_scanner import StagingScanner
from app.sources.local import LocalSource


def _vet(tmp_path: Path, files: dict[str, str]) -> Report:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return vet(LocalSource(tmp_path), [StagingScanner()], options=VetOptions(workers=1))


def _staging(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.scanner == "staging"]  # the other files are nobody's here


@pytest.mark.parametrize(("line", "rule"), [
    ("base64 -d kernel.b64 > libk.so && chmod +x libk.so", "decodes-shipped-file"),
    ("base64 --decode < ./kernel.b64 > /tmp/k", "decodes-shipped-file"),
    ("xxd -r -p kernel.b64 > run", "decodes-shipped-file"),
    ("python -c \"import base64;open('k','wb').write(base64.b64decode(open('kernel.b64').read()))\"",
     "decodes-shipped-file"),
    ("LD_PRELOAD=./libhook.so python serve.py", "preloads-shipped-library"),
    ("export LD_PRELOAD=$PWD/libhook.so", "preloads-shipped-library"),
    ("DYLD_INSERT_LIBRARIES=/workspace/model/libhook.so ./run", "preloads-shipped-library"),
    ("LD_PRELOAD=/usr/lib/libtcmalloc.so:./libhook.so vllm serve .", "preloads-shipped-library"),
])
def test_lines_that_stage_a_shipped_file(tmp_path: Path, line: str, rule: str) -> None:
    report = _vet(tmp_path, {"README.md": f"```\n{line}\n```\n", "kernel.b64": "QUJD", "libhook.so": "x"})
    assert [f.rule for f in _staging(report)] == [rule]
    assert _staging(report)[0].evidence == f"README.md:2: {line}"


@pytest.mark.parametrize("line", [
    "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4 python serve.py",  # a system library
    "base64 -d other.b64 > x",  # not a file of this repo (the links scanner follows downloads)
    "base64 kernel.b64",  # encoding, not decoding
    "cat kernel.b64",
])
def test_lines_that_do_not(tmp_path: Path, line: str) -> None:
    report = _vet(tmp_path, {"run.sh": line + "\n", "kernel.b64": "QUJD"})
    assert _staging(report) == []
