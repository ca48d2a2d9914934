"""The repo around one Python module: shipped extension modules, helper modules it imports,
and code pip runs at install (``setup.py``, an in-tree PEP 517 build backend).

transformers (``get_cached_module_file``) copies the module ``auto_map`` names and, recursively,
every module it imports relatively (``from .helper import f``) into one dynamic-module folder and
imports them from there; vLLM and SGLang load remote code through the same transformers path.
A script run from the repo folder (``python run.py``) also finds ``import helper`` absolutely, so
both forms are followed, beside the module or at the repo root.
"""

from __future__ import annotations

import ast
import posixpath
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from app.core.manifest import ManifestFile

NATIVE_SUFFIXES = (".so", ".pyd", ".dylib", ".dll")
MAX_HELPERS = 16  # helper modules read per module


@dataclass(frozen=True)
class BuildBackend:
    module: str  # dotted module name, e.g. "backend" or "tools.build"
    paths: tuple[str, ...]  # backend-path entries, relative to the repo root

    def files(self) -> tuple[str, ...]:
        rel = self.module.replace(".", "/")
        return tuple(posixpath.normpath(posixpath.join(p, f)) for p in self.paths
                     for f in (rel + ".py", rel + "/__init__.py"))


def native_modules(files: Iterable[ManifestFile]) -> frozenset[str]:
    """Names ``import x`` would load from a shipped extension (``x.cpython-311-x86_64-linux-gnu.so``)."""
    out = set()
    for f in files:
        base = posixpath.basename(f.path)
        if base.lower().endswith(NATIVE_SUFFIXES) or f.format in ("elf", "pe", "macho"):
            stem = base.split(".", 1)[0]
            if stem.isidentifier():
                out.add(stem)
    return frozenset(out)


def build_backend(pyproject: bytes) -> BuildBackend | None:
    """An in-tree build backend: ``build-backend`` loaded from ``backend-path`` inside the repo."""
    try:
        data = tomllib.loads(pyproject.decode("utf-8", errors="replace"))
    except tomllib.TOMLDecodeError:
        return None
    system = data.get("build-system")
    if not isinstance(system, dict):
        return None
    backend, paths = system.get("build-backend"), system.get("backend-path")
    if not isinstance(backend, str) or not isinstance(paths, list) or not paths:
        return None
    module = backend.split(":", 1)[0].strip()
    return BuildBackend(module, tuple(str(p) for p in paths))


def helper_imports(tree: ast.AST, path: str, present: set[str]) -> dict[str, str]:
    """Import name as ``Names`` spells it (".helper", "..helper", "helper") -> repo file it loads."""
    found: dict[str, str] = {}
    for key, level, dotted in _imports(tree):
        target = _resolve(path, level, dotted, present)
        if target and target != path and len(found) < MAX_HELPERS:
            found.setdefault(key, target)
    return found


def _imports(tree: ast.AST) -> Iterator[tuple[str, int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is None and "." not in alias.name:
                    yield alias.name, 0, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            if node.module:
                yield base, node.level, node.module
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}" if node.module else alias.name
                yield f"{base}.{alias.name}", node.level, dotted


def _resolve(path: str, level: int, dotted: str, present: set[str]) -> str | None:
    here = posixpath.dirname(path)
    bases = [here, ""] if level <= 1 else [_up(here, level - 1)]
    rel = dotted.replace(".", "/")
    for base in bases:
        for candidate in (rel + ".py", rel + "/__init__.py"):
            full = posixpath.normpath(posixpath.join(base, candidate)) if base else candidate
            if full in present:
                return full
    return None


def _up(folder: str, levels: int) -> str:
    for _ in range(levels):
        folder = posixpath.dirname(folder)
    return folder
