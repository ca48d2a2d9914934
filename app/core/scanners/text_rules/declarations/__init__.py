"""Every dependency declaration in a file, read by the reader its name (or content) calls for.

``declarations_of(path, text)`` returns the ``Declared`` records; ``read_declarations`` returns
the same as a ``Reading`` whose ``error`` is set when a file that *is* a declaration by its name
(pyproject.toml, a PEP 723 block, a conda environment file, Chart.yaml) could not be parsed: the
installer may read what this parser refused, so the caller reports it. Other YAML that does not
parse (Helm templates, Jinja-in-YAML) has no error: it declares nothing known.
"""

from __future__ import annotations

import posixpath
import re

from app.core.scanners.text_rules.declarations import (
    gitmodules,
    inline_script,
    launchers,
    pyproject,
    requirements,
    yaml_files,
)
from app.core.scanners.text_rules.declarations.common import Reading
from app.core.scanners.text_rules.declarations.yaml_nodes import YamlUnreadable, documents
from app.core.scanners.text_rules.declared import Declared

__all__ = ["Reading", "declarations_of", "read_declarations"]

_REQUIREMENTS = re.compile(r"(?:.*requirements.*\.(?:txt|in)|constraints.*\.txt|.*\.pip)")
_CONDA_NAMES = re.compile(r"(?:environment|env[^/]*|conda[^/]*)\.ya?ml$")
_CHART_NAMES = ("chart.yaml", "chart.yml")
_DEFINITION = re.compile(r"(?:.*\.def|singularity(?:\..*)?|apptainer(?:\..*)?)$")


def declarations_of(path: str, text: str) -> list[Declared]:
    return list(read_declarations(path, text))


def read_declarations(path: str, text: str) -> Reading:
    base = posixpath.basename(path).lower()
    parent = posixpath.basename(posixpath.dirname(path)).lower()
    if base == "pyproject.toml":
        found = pyproject.read(text)
    elif base.endswith((".py", ".pyw")) or (inline_script.is_uv_script(text) and "." not in base):
        found = inline_script.read(text)
    elif _REQUIREMENTS.fullmatch(base) or (parent == "requirements" and base.endswith(".txt")):
        found = requirements.read(text)
    elif base == ".gitmodules":
        found = gitmodules.read(text)
    elif base.endswith((".yaml", ".yml")):
        found = _yaml(base, text)
    else:
        found = Reading()
    launched = launchers.read_definition(text) if _DEFINITION.fullmatch(base) else launchers.read(text)
    for declared in launched:
        found.add(declared)
    return found


def _yaml(base: str, text: str) -> Reading:
    chart = base in _CHART_NAMES or base == "requirements.yaml"
    named_conda = bool(_CONDA_NAMES.fullmatch(base))
    try:
        roots = documents(text)
    except YamlUnreadable as exc:
        return Reading(error=str(exc) if chart or named_conda else None)
    lines = yaml_files.Lines(text)
    found = Reading()
    if chart:
        found = yaml_files.chart_dependencies(roots, lines)
    elif named_conda or yaml_files.looks_like_conda_env(roots):
        found = yaml_files.conda_env(roots, lines, via=base)
    for declared in yaml_files.images(roots, lines):
        found.add(declared)
    return found
