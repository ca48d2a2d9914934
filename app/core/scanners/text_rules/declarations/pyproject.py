"""``pyproject.toml`` (and the same tables in PEP 723 script metadata): every place pip, uv, Poetry,
PDM and Hatch take a requirement or a package source from.

- PEP 621 ``[project] dependencies`` / ``optional-dependencies`` and PEP 735 ``[dependency-groups]``
  (PEP 508 strings; ``{include-group = ...}`` tables name no source); PEP 518 ``[build-system]
  requires``: installed to *build* the project, before any of its code is looked at.
- uv (docs.astral.sh/uv/concepts/projects/dependencies, concepts/indexes): ``[tool.uv.sources]``
  entries (a table or a list of tables with markers) with ``git`` (cloned and built), ``url``
  (archive or wheel), ``index = NAME`` (that package only from the ``[[tool.uv.index]]`` of that
  name), ``path``/``workspace`` (local: nothing fetched); ``[[tool.uv.index]]`` ``url``: searched
  *before* PyPI unless ``explicit = true`` (then only for packages pinned to it); ``default = true``
  replaces PyPI (so not extra); ``format = "flat"`` is a find-links page. ``index-url`` (replaces
  PyPI), ``extra-index-url`` and ``find-links`` (beside it) in ``[tool.uv]`` and ``[tool.uv.pip]``;
  ``override-``/``constraint-``/``dev-dependencies`` are requirements too (an override replaces
  the requirement of every package that names it).
- Poetry: ``[tool.poetry.dependencies]``, ``dev-dependencies`` and ``group.<g>.dependencies``
  (a version string, or tables with ``git``/``url``/``path``/``source``); ``[[tool.poetry.source]]``:
  ``priority = "primary"`` (the default) or ``default = true`` replace PyPI, ``supplemental``,
  ``explicit`` and the old ``secondary = true`` sit beside it.
- PDM: ``[[tool.pdm.source]]`` (named ``pypi`` it replaces PyPI; ``type = "find_links"`` is a page),
  ``[tool.pdm.dev-dependencies]``; Hatch: ``[tool.hatch.envs.<env>] dependencies``/``extra-dependencies``.
"""

from __future__ import annotations

import tomllib
from typing import Any

from app.core.scanners.text_rules.declarations.common import LineIndex, Reading, at, requirement, source_kind
from app.core.scanners.text_rules.declared import Declared

_UV_REQUIREMENT_LISTS = ("override-dependencies", "constraint-dependencies", "dev-dependencies",
                         "build-constraint-dependencies")


def read(text: str) -> Reading:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as exc:
        return Reading(error=f"not valid TOML: {str(exc)[:200]}")
    return read_data(data, Locator(text))


class Locator:
    """Line numbers for values tomllib parsed without them: the first line holding the value verbatim."""

    def __init__(self, text: str, start: int = 0) -> None:
        self.index = LineIndex(text, start)

    def find(self, value: str) -> tuple[str, str]:
        number, line = self.index.find(value)
        return at(number), line.strip()


def read_data(data: dict[str, Any], where: Locator, script: bool = False) -> Reading:
    """The declarations of a parsed pyproject (or, ``script``, PEP 723 metadata: top-level ``dependencies``)."""
    found = Reading()
    project = _table(data.get("project"))
    _requirements(_list(data.get("dependencies") if script else project.get("dependencies")),
                  "script dependencies" if script else "[project] dependencies", where, found)
    for group, specs in _table(project.get("optional-dependencies")).items():
        _requirements(_list(specs), f"[project.optional-dependencies] {group}", where, found)
    _requirements(_list(_table(data.get("build-system")).get("requires")), "[build-system] requires", where, found)
    for group, specs in _table(data.get("dependency-groups")).items():
        _requirements(_list(specs), f"[dependency-groups] {group}", where, found)
    tool = _table(data.get("tool"))
    _uv(_table(tool.get("uv")), where, found)
    _poetry(_table(tool.get("poetry")), where, found)
    _pdm(_table(tool.get("pdm")), where, found)
    for env, spec in _table(_table(tool.get("hatch")).get("envs")).items():
        for key in ("dependencies", "extra-dependencies"):
            _requirements(_list(_table(spec).get(key)), f"[tool.hatch.envs.{env}] {key}", where, found)
    return found


def _requirements(specs: list[Any], via: str, where: Locator, found: Reading) -> None:
    for spec in specs:
        if found.full:
            return
        if isinstance(spec, str):
            spec = spec.removeprefix("-e ").strip()  # PDM writes editable dev requirements so
            found.add(requirement(spec, *where.find(spec), via))


def _index(url: Any, via: str, where: Locator, found: Reading, extra: bool) -> None:
    if isinstance(url, str) and url and not found.full:
        found.add(Declared("index", url, *where.find(url), via, extra=extra))


def _uv(uv: dict[str, Any], where: Locator, found: Reading) -> None:
    indexes: dict[str, str] = {}
    for entry in _list(uv.get("index")):
        entry = _table(entry)
        url, name = entry.get("url"), str(entry.get("name", ""))
        flags = " ".join(f for f in ("explicit", "default") if entry.get(f) is True)
        flat = " flat (find-links)" if entry.get("format") == "flat" else ""
        replaces_pypi = entry.get("default") is True
        _index(url, f"[[tool.uv.index]] {name} {flags}{flat}".strip(), where, found, extra=not replaces_pypi)
        if name and isinstance(url, str):
            indexes[name] = url
    for table, label in ((uv, "[tool.uv]"), (_table(uv.get("pip")), "[tool.uv.pip]")):
        _index(table.get("index-url"), f"{label} index-url", where, found, extra=False)
        for key in ("extra-index-url", "find-links"):
            for url in _list(table.get(key)):
                _index(url, f"{label} {key}", where, found, extra=True)
    for key in _UV_REQUIREMENT_LISTS:
        _requirements(_list(uv.get(key)), f"[tool.uv] {key}", where, found)
    for package, sources in _table(uv.get("sources")).items():
        for source in _list(sources) if isinstance(sources, list) else [sources]:
            _uv_source(str(package), _table(source), indexes, where, found)


def _uv_source(package: str, source: dict[str, Any], indexes: dict[str, str], where: Locator,
               found: Reading) -> None:
    via = f"[tool.uv.sources] {package}"
    git, url, index = source.get("git"), source.get("url"), source.get("index")
    if isinstance(git, str) and git:
        found.add(Declared("git", git, *where.find(git), via))
    if isinstance(url, str) and url:
        found.add(Declared(source_kind(url), url, *where.find(url), via))
    if isinstance(index, str) and index in indexes:  # an undeclared index is an error to uv
        _index(indexes[index], f"{via} index {index}", where, found, extra=True)


def _poetry(poetry: dict[str, Any], where: Locator, found: Reading) -> None:
    sources: dict[str, str] = {}
    for entry in _list(poetry.get("source")):
        entry = _table(entry)
        url, name = entry.get("url"), str(entry.get("name", ""))
        priority = str(entry.get("priority", "primary")).lower()
        secondary = entry.get("secondary") is True
        replaces = entry.get("default") is True or (priority in ("primary", "default") and not secondary)
        _index(url, f"[[tool.poetry.source]] {name} {priority}", where, found, extra=not replaces)
        if name and isinstance(url, str):
            sources[name] = url
    tables = [("dependencies", poetry.get("dependencies")), ("dev-dependencies", poetry.get("dev-dependencies"))]
    tables += [(f"group.{g}.dependencies", _table(spec).get("dependencies"))
               for g, spec in _table(poetry.get("group")).items()]
    for label, table in tables:
        for name, spec in _table(table).items():
            if name.lower() != "python":
                for entry in _list(spec) if isinstance(spec, list) else [spec]:
                    _poetry_dependency(str(name), entry, f"[tool.poetry.{label}] {name}", sources, where, found)


def _poetry_dependency(name: str, spec: Any, via: str, sources: dict[str, str], where: Locator,
                       found: Reading) -> None:
    if isinstance(spec, str):
        version = spec.strip()
        value = f"{name}{version}" if version[:1] in "<>=!~" and version else name
        found.add(Declared("package", value, *where.find(name), via))
        return
    entry = _table(spec)
    git, url, source = entry.get("git"), entry.get("url"), entry.get("source")
    if isinstance(git, str) and git:
        found.add(Declared("git", git, *where.find(git), via))
    elif isinstance(url, str) and url:
        found.add(Declared(source_kind(url), url, *where.find(url), via))
    elif entry.get("path") is None:
        found.add(Declared("package", name, *where.find(name), via))
    if isinstance(source, str) and source in sources:
        _index(sources[source], f"{via} source {source}", where, found, extra=True)


def _pdm(pdm: dict[str, Any], where: Locator, found: Reading) -> None:
    for entry in _list(pdm.get("source")):
        entry = _table(entry)
        name = str(entry.get("name", ""))
        kind = " find_links" if entry.get("type") == "find_links" else ""
        _index(entry.get("url"), f"[[tool.pdm.source]] {name}{kind}", where, found,
               extra=name.lower() != "pypi" or bool(kind))
    for group, specs in _table(pdm.get("dev-dependencies")).items():
        _requirements(_list(specs), f"[tool.pdm.dev-dependencies] {group}", where, found)


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
