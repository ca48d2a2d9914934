"""Shapes of text the readers pick apart: command lines, call arguments, literals, entry points, parsed configs.

Bounded and pure: nothing here imports or runs what it reads (``ast.literal_eval`` builds literals only).
"""

from __future__ import annotations

import ast
import functools
import json
import re
import tomllib
from collections.abc import Iterator
from typing import Any

import yaml

MAX_CALL_ARGS = 800  # characters of a call's argument list read


UNPARSED = object()  # the text is not JSON / YAML


@functools.lru_cache(maxsize=64)
def parsed_json(text: str) -> Any:
    """One parse per text for every surface that reads it (callers only read the result, never change it)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return UNPARSED


@functools.lru_cache(maxsize=64)
def parsed_yaml(text: str) -> Any:
    """``yaml.safe_load`` once per text (Hydra and vLLM read these with PyYAML's pure-Python safe loader too)."""
    try:
        return yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError, ValueError):
        return UNPARSED


def commands(text: str) -> Iterator[str]:
    """Logical command lines: backslash continuations joined, so a flag and its value stay together."""
    pending = ""
    for line in text.splitlines():
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        yield pending + stripped
        pending = ""
    if pending:
        yield pending


def literal(text: str, start: int) -> Any:
    """The JSON (or Python literal) object that opens at ``start``, braces balanced, bounded; None if unreadable.
    ``ast.literal_eval`` only builds literals: it never runs code."""
    depth, end, quote = 0, start, ""
    limit = min(len(text), start + MAX_CALL_ARGS)
    while end < limit:
        char = text[end]
        if quote:
            quote = "" if char == quote and text[end - 1] != "\\" else quote
        elif char in "\"'":
            quote = char
        elif char in "{}":
            depth += 1 if char == "{" else -1
            if depth == 0:
                break
        end += 1
    if depth != 0:
        return None
    raw = text[start:end + 1]
    try:
        return json.loads(raw)
    except ValueError:
        pass
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
        return None


def call_args(text: str, start: int) -> str:
    """The argument text of a call, up to its closing parenthesis (nested ones kept), bounded."""
    depth, end = 1, start
    limit = min(len(text), start + MAX_CALL_ARGS)
    while end < limit and depth:
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    return text[start:end - 1 if depth == 0 else end]


def toml_entry_points(text: str) -> list[tuple[str, str]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    project = data.get("project")
    groups = project.get("entry-points") if isinstance(project, dict) else None
    if not isinstance(groups, dict):
        return []
    return [(str(g), str(v)) for g, entries in groups.items() if isinstance(entries, dict)
            for v in entries.values() if isinstance(v, str)]


_SETUP_GROUP = re.compile(r"""["']([\w.-]+)["']\s*:\s*\[([^\]]{0,2000})\]""")
_SETUP_ENTRY = re.compile(r"""["'][^"'=]*=\s*([\w.:]+)\s*["']""")
_CFG_GROUP = re.compile(r"^\s*([\w.-]+)\s*=\s*$")


def text_entry_points(text: str) -> list[tuple[str, str]]:
    """``entry_points={"group": ["name = mod:attr"]}`` in setup.py, ``[options.entry_points]`` in setup.cfg."""
    found = [(m.group(1), e.group(1)) for m in _SETUP_GROUP.finditer(text) for e in _SETUP_ENTRY.finditer(m.group(2))]
    group = None
    for line in text.splitlines():
        header = _CFG_GROUP.match(line)
        if header:
            group = header.group(1)
        elif group and "=" in line and line[:1].isspace():
            found.append((group, line.split("=", 1)[1].strip()))
        elif line.strip() and not line[:1].isspace():
            group = None
    return found
