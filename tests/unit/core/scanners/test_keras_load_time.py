"""Keras layers and config values with load-time side effects (tests/corpus/keras_configs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.scanners.keras_scanner import KerasScanner
from tests.corpus import keras_configs as corpus
from tests.unit.core.scanners import peer_samples as s


@pytest.mark.parametrize("name", sorted(corpus.HOSTILE))
def test_load_time_effects_are_high(tmp_path: Path, name: str) -> None:
    layers, rule, _why = corpus.HOSTILE[name]
    (tmp_path / "model.keras").write_bytes(corpus.keras_file(layers))
    report = s.vet_with(KerasScanner(), tmp_path)
    hits = [f for f in report.findings if f.rule == rule]
    assert hits and all(f.severity is Severity.HIGH and f.member == "config.json" for f in hits)


def test_ordinary_values_and_inline_vocabularies_are_not_paths(tmp_path: Path) -> None:
    layers = [corpus._layer("StringLookup", {"vocabulary": ["a", "b/c"]}), corpus.DENSE,
              corpus._layer("Dense", {"units": 1, "dtype": "mixed_float16", "kernel_initializer": "glorot_uniform"})]
    (tmp_path / "model.keras").write_bytes(corpus.keras_file(layers))
    assert s.vet_with(KerasScanner(), tmp_path).findings == ()
