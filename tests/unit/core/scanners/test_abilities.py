"""The optional scanner abilities are declared in ``scanners/base.py`` and found by ``isinstance`` only:
the pipeline knows no scanner family and looks up no method by name (issue 26, P5)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from app.core.scanners import all_scanners
from app.core.scanners.base import Corroborating, PeersMode, Preparing, ReadsAs
from app.settings import Settings

PIPELINE = Path(__file__).parents[4] / "app" / "core" / "pipeline.py"


def test_the_abilities_each_scanner_has_are_the_declared_ones() -> None:
    scanners = all_scanners()
    assert {s.name for s in scanners if isinstance(s, Corroborating)} == {"picklescan", "modelscan"}
    assert {s.name for s in scanners if isinstance(s, ReadsAs)} == {"hfvet-pickle"}
    assert "modelscan" in {s.name for s in scanners if isinstance(s, Preparing)}


def test_every_corroborating_scanner_names_a_scanner_that_runs_before_it() -> None:
    names = [s.name for s in all_scanners()]
    for scanner in all_scanners():
        if isinstance(scanner, Corroborating):
            assert names.index(scanner.corroborates) < names.index(scanner.name)


def test_the_pipeline_imports_no_scanner_family_and_finds_no_method_by_name() -> None:
    text = PIPELINE.read_text()
    assert "scanners.peers" not in text
    assert not re.search(r"\b(getattr|hasattr)\(", text)


def test_the_settings_spell_out_the_peers_modes_the_scanners_know() -> None:
    # settings.py repeats the values so that light commands need not import scanner modules
    assert get_args(Settings.model_fields["peers"].annotation) == get_args(PeersMode)
