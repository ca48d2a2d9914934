"""The loader map is well formed, every surface has its cases, and docs/attack-surface.md is generated from it."""

from __future__ import annotations

from pathlib import Path

from app.core.loaders.docs import render
from app.core.loaders.loader_map import loader_map
from app.core.loaders.schema import Read
from tests.corpus.registry import all_cases

DOC = Path(__file__).resolve().parents[4] / "docs" / "attack-surface.md"
CASES = {case.key: case for case in all_cases()}


def test_every_surface_belongs_to_a_declared_runtime_and_cites_its_source() -> None:
    lmap = loader_map()
    runtimes = {r.id for r in lmap.runtimes}
    for surface in lmap.surfaces:
        assert surface.runtime in runtimes, surface.id
        assert surface.id.startswith(surface.runtime + "."), surface.id
        assert surface.source.file and surface.source.function and surface.source.version, surface.id
        assert surface.files, surface.id
        if surface.read in (Read.JSON, Read.YAML, Read.FLAGS, Read.CALLS, Read.ENTRY_POINTS):
            assert surface.fields, f"{surface.id}: a {surface.read} surface needs fields"


def test_every_surface_has_a_hostile_and_a_benign_case_that_exist() -> None:
    for surface in loader_map().surfaces:
        missing = [key for key in surface.cases if key not in CASES]
        assert not missing, f"{surface.id}: unknown corpus cases {missing}"
        kinds = {CASES[key].kind for key in surface.cases}
        wanted = {"hostile"} if surface.no_benign else {"hostile", "benign"}
        assert kinds == wanted, f"{surface.id}: needs {sorted(wanted)} cases, has {sorted(kinds)}"


def test_the_attack_surface_document_is_generated_from_the_map() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), "run: python scripts/gen_attack_surface.py"


def test_every_runtime_the_issue_names_is_mapped() -> None:
    runtimes = {r.id for r in loader_map().runtimes}
    assert {"transformers", "endpoints", "python"} <= runtimes
