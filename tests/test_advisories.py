"""Every advisory the docs name has a test that reproduces its bypass, tagged
``@pytest.mark.advisory("CVE-...")`` (as modelaudit names its tests after the advisory they
reproduce). An advisory cited in docs/ without a tagged test fails here; ``pytest -m advisory`` runs
them all. The tags are read from the source, so this holds whichever tests a run selects."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).parents[1]
ADVISORY = re.compile(r"\b(CVE-\d{4}-\d{4,}|GHSA(?:-[23456789cfghjmpqrvwx]{4}){3})\b")


@cache
def named_in_docs() -> set[str]:
    docs = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    return {m for path in docs for m in ADVISORY.findall(path.read_text(encoding="utf-8"))}


def _marker_ids(decorator: ast.expr) -> list[str]:
    """The ids of a ``@pytest.mark.advisory(...)`` decorator, or [] for any other decorator."""
    if not (isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.advisory"):
        return []
    return [arg.value for arg in decorator.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]


@cache
def tagged_tests() -> dict[str, list[str]]:
    """Advisory id -> the tests tagged with it (``path::name``)."""
    tagged: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_"):
                for advisory in (i for d in node.decorator_list for i in _marker_ids(d)):
                    tagged.setdefault(advisory, []).append(f"{path.relative_to(ROOT)}::{node.name}")
    return tagged


def test_every_advisory_the_docs_name_has_a_tagged_reproduction() -> None:
    assert named_in_docs()  # the docs cite advisories; a broken pattern must not pass vacuously
    missing = named_in_docs() - tagged_tests().keys()
    assert not missing, f"no test tagged @pytest.mark.advisory(...) reproduces {sorted(missing)}"


def test_every_tag_is_a_well_formed_advisory_id() -> None:
    assert tagged_tests()
    assert [i for i in tagged_tests() if not ADVISORY.fullmatch(i)] == []
