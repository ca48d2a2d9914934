"""Safetensors ``__metadata__`` and GGUF metadata strings get the text rules, naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.formats.blobs import BytesBlob
from app.core.formats.gguf_header import MAX_KEPT_ARRAY, read_gguf
from app.core.pipeline import VetOptions, vet
from app.core.scanners.safetensors_scanner import SafetensorsScanner
from app.core.scanners.template_scanner import TemplateScanner
from app.sources.local import LocalSource
from tests.corpus import metadata_text as corpus
from tests.corpus.registry import all_cases

CASES = [c for c in all_cases() if c.family == corpus.FAMILY]


def _vet(tmp_path: Path, files: dict[str, bytes]):  # type: ignore[no-untyped-def]
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return vet(LocalSource(tmp_path), [SafetensorsScanner(), TemplateScanner()], options=VetOptions(workers=1))


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "hostile"], ids=lambda c: c.name)
def test_hostile_metadata_text_is_found_with_its_key(tmp_path: Path, case) -> None:  # type: ignore[no-untyped-def]
    report = _vet(tmp_path, case.files())
    hits = [f for f in report.findings if f.rule == case.rule]
    assert hits, [f.rule for f in report.findings]
    assert all(f.severity in (Severity.HIGH, Severity.CRITICAL) for f in hits)
    assert any(("__metadata__[" in f.message or "GGUF metadata general." in f.message) for f in hits)


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "benign"], ids=lambda c: c.name)
def test_ordinary_metadata_is_info_at_most(tmp_path: Path, case) -> None:  # type: ignore[no-untyped-def]
    report = _vet(tmp_path, case.files())
    assert {f.severity for f in report.findings} <= {Severity.INFO}


def test_gguf_reader_keeps_short_strings_and_short_string_arrays() -> None:
    tokens = [f"t{i}" for i in range(MAX_KEPT_ARRAY + 1)]
    data = corpus.gguf({"general.architecture": "llama", "general.url": "u"},
                       {"general.tags": ["a", "b"], "tokenizer.ggml.tokens": tokens})
    header = read_gguf(BytesBlob(data), 1 << 20)
    assert header.strings == {"general.url": "u", "general.tags[0]": "a", "general.tags[1]": "b"}
    assert header.facts["general.architecture"] == "llama"
