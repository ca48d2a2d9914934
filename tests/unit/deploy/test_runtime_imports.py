"""Everything app/ imports is installed by `pip install .` alone: the standard library, a runtime dependency
of pyproject.toml, or one of theirs. A module only the dev extra brings (httpx, pytest...) would pass every
test here and fail a user's install: `hfvet review --server` once imported httpx."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
RUNTIME = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def installed_by_runtime() -> set[str]:
    """The runtime dependencies and, transitively, what they require (their extras left out)."""
    wanted, seen = [_name(r) for r in RUNTIME], set()
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            needs = requires(name) or []
        except PackageNotFoundError:
            continue
        wanted += [_name(r) for r in needs if "extra ==" not in r]
    return seen


def imported_top_levels() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "app").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"app", "__future__"}


def test_every_module_app_imports_comes_with_a_runtime_install() -> None:
    runtime = installed_by_runtime()
    owners = packages_distributions()
    missing = {module: owners.get(module, ["?"]) for module in imported_top_levels()
               if not any(_name(dist) in runtime for dist in owners.get(module, []))}
    assert not missing, f"imported by app/ but installed only by the dev extra (or not at all): {missing}"
