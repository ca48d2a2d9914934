"""Read one file as a loader-map surface says, into closure items. Never imports or runs anything.

Each ``Read`` kind has one reader here; each ``Form`` (``forms``) says how a value found names its
target. Values that name nothing a runtime would fetch (a local folder, the repo itself, a library the
runtime ships) yield no item.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import yaml

from app.core.closure import ClosureItem
from app.core.loaders.fields import values_at
from app.core.loaders.forms import FORMS, dotted
from app.core.loaders.schema import Form, Read, Surface
from app.core.loaders.text_shapes import (
    UNPARSED,
    call_args,
    commands,
    literal,
    parsed_json,
    parsed_yaml,
    text_entry_points,
    toml_entry_points,
)
from app.core.loaders.view import FileView, holder_of, make_item, repo_items

_QUOTED_REPO = r"""["']([A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96})["']"""
_REPO_KWARGS = ("repo_id", "pretrained_model_name_or_path", "model", "model_name_or_path", "model_id",
                "repo_or_dir", "tokenizer", "repo")
_KW_REPO = re.compile(rf"\b(?:{'|'.join(_REPO_KWARGS)})\s*=\s*{_QUOTED_REPO}")
_FIRST_ARG = re.compile(rf"^\s*{_QUOTED_REPO}")
_REVISION = re.compile(r"""\brevision\s*=\s*["']([\w./-]{1,128})["']""")
_TRUST_KW = re.compile(r"\btrust_remote_code\s*=\s*True\b")
_TRUST_FLAG = re.compile(r"--trust[-_]remote[-_]code\b(?!\s*(?:=\s*)?(?:false|False|0)\b)")


Reader = Callable[[Surface, FileView], Iterator[ClosureItem]]


def read_surface(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    yield from READERS[surface.read](surface, view)


def _read_file(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    yield make_item(surface, view, view.path)


def _read_json(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    data = parsed_json(view.text)
    if data is not UNPARSED:  # the config scanners report unparseable JSON
        yield from _read_fields(surface, view, data)


def _read_yaml(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    data = parsed_yaml(view.text)
    if data is not UNPARSED:
        yield from _read_fields(surface, view, data)


def _read_fields(surface: Surface, view: FileView, data: Any) -> Iterator[ClosureItem]:
    for field in surface.fields:
        for where, value in values_at(data, field):
            revision = _sibling_revision(surface, data, where)
            for item in FORMS[surface.form](surface, view, where, value):
                yield replace(item, revision=revision) if revision and item.repo and not item.revision else item


def _sibling_revision(surface: Surface, data: Any, where: str) -> str | None:
    """The revision a runtime passes with the repo: the ``revision_key`` beside the value (PEFT's ``revision``)."""
    if surface.revision_key is None:
        return None
    _at, holder = holder_of(data, where)
    revision = holder.get(surface.revision_key) if isinstance(holder, dict) else None
    return revision if isinstance(revision, str) and revision.strip() else None


def _read_flags(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    """``--flag VALUE`` / ``--flag=VALUE``; a field not starting with ``-`` is a command whose first
    argument is the value (``vllm serve org/name``); ``command --flag`` takes the flag only after that
    command on the same command line (``--model`` is every CLI's flag, not only the runtime's)."""
    for command in commands(view.text):
        trust = surface.carries_trust and bool(_TRUST_FLAG.search(command))
        for field in surface.fields:
            scope, flag = _scoped_flag(field)
            at = _after_command(scope, command) if scope else 0
            if at is None:
                continue
            joiner = r"(?:=|\s+)" if flag.startswith("-") else r"\s+"
            for match in re.finditer(rf"(?:^|[\s`$(]){re.escape(flag)}{joiner}[\"']?([^\s\"'\\`]+)", command[at:]):
                yield from repo_items(surface, view, match.group(1), None, trust)


def _scoped_flag(field: str) -> tuple[str, str]:
    """``"vllm serve --model"`` -> (``vllm serve``, ``--model``); a bare flag or command has no scope."""
    scope, sep, option = field.partition(" -")
    return (scope.strip(), "-" + option) if sep and scope.strip() else ("", field)


def _after_command(scope: str, command: str) -> int | None:
    """Where ``scope`` (a command: ``vllm serve``, ``sglang.launch_server``) ends in the line, or None."""
    found = re.search(rf"(?:^|[\s`$(/]){re.escape(scope)}(?![\w.-])", command)
    return found.end() if found else None


def _read_calls(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    """``name("org/x", revision=..., trust_remote_code=True)``; ``name(kw)`` takes the repo from keyword ``kw``."""
    for field in surface.fields:
        name, _, keyword = field.partition("(")
        keyword = keyword.rstrip(")")
        if keyword and surface.form is not Form.REPO_ID:
            yield from _keyword_values(surface, view, field, name, keyword)
            continue
        pick = re.compile(rf"\b{re.escape(keyword)}\s*=\s*{_QUOTED_REPO}") if keyword else None
        for match in re.finditer(rf"(?<![\w]){re.escape(name)}\s*\(", view.text):
            args = call_args(view.text, match.end())
            repo = pick.search(args) if pick else (_FIRST_ARG.match(args) or _KW_REPO.search(args))
            if repo:
                revision = _REVISION.search(args)
                trust = surface.carries_trust and bool(_TRUST_KW.search(args))
                yield from repo_items(surface, view, repo.group(1), revision.group(1) if revision else None, trust)


def _read_pth(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    # site.addpackage: a line starting with "import" followed by a space or tab is exec()'d.
    if any(line.startswith(("import ", "import\t")) for line in view.text.splitlines()):
        yield make_item(surface, view, view.path)


def _read_entry_points(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    groups = toml_entry_points(view.text) if view.path.endswith(".toml") else text_entry_points(view.text)
    for group, value in groups:
        if group in surface.fields:
            yield from dotted(surface, view, group, value)


def _read_json_holder(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    """The objects holding the value at each field: ``**.auto_map`` gives every config and sub-config
    (``text_config``, ``llm_config``...) that has an ``auto_map``, wherever it sits."""
    data = parsed_json(view.text)
    if data is UNPARSED:
        return
    for field in surface.fields:
        for where, _value in values_at(data, field):
            at, holder = holder_of(data, where)
            if holder is not None:
                yield from FORMS[surface.form](surface, view, at, holder)


def _keyword_values(surface: Surface, view: FileView, field: str, name: str,
                    keyword: str) -> Iterator[ClosureItem]:
    """``name(..., keyword="value")``: the quoted value, read as the surface's form says."""
    pick = re.compile(rf"""\b{re.escape(keyword)}\s*=\s*["']([^"'\n]{{1,200}})["']""")
    for match in re.finditer(rf"(?<![\w]){re.escape(name)}\s*\(", view.text):
        value = pick.search(call_args(view.text, match.end()))
        if value:
            yield from FORMS[surface.form](surface, view, field, value.group(1))


_FRONT_MATTER = re.compile(r"\A\ufeff?\s*---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def _read_front_matter(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    """A card's metadata block, as huggingface_hub's ModelCard parses it (``---`` ... ``---`` at the top)."""
    block = _FRONT_MATTER.match(view.text)
    if block is None:
        return
    try:
        data = yaml.safe_load(block.group(1))
    except (yaml.YAMLError, RecursionError, ValueError):
        return
    yield from _read_fields(surface, view, data)


_TRUST_KEYS = ("trust-remote-code", "trust_remote_code")


def _read_args_yaml(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    """A launcher config whose top-level keys are its flags: ``trust-remote-code: true`` in the same file
    is what sends the user's trust with the repos it names."""
    data = parsed_yaml(view.text)
    if not isinstance(data, dict):
        return
    trust = surface.carries_trust and any(data.get(key) is True for key in _TRUST_KEYS)
    for field in surface.fields:
        for _where, value in values_at(data, field):
            if isinstance(value, str):
                yield from repo_items(surface, view, value, None, trust)


def _read_flag_json(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    """``--flag '{"key": "org/x"}'`` (a field ``--flag:key``), or a keyword ``name={"key": ...}`` in code
    (a field ``name:key``, read over the whole file, as a call spans lines)."""
    for field in surface.fields:
        flag, _, path = field.partition(":")
        units = list(commands(view.text)) if flag.startswith("-") else [view.text]
        joiner = r"(?:=|\s+)[\"']?" if flag.startswith("-") else r"\s*=\s*"
        for unit in units:
            trust = surface.carries_trust and bool(_TRUST_FLAG.search(unit) or _TRUST_KW.search(unit))
            for match in re.finditer(rf"(?:^|[\s`$(,]){re.escape(flag)}{joiner}(?=\{{)", unit):
                for _where, value in values_at(literal(unit, match.end()), path):
                    if isinstance(value, str):
                        yield from repo_items(surface, view, value, None, trust)


def _read_call_paths(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    """``name("libops.so")``: the file of this repo the call loads (a path it does not ship names nothing)."""
    for name in surface.fields:
        for match in re.finditer(rf"(?<![\w]){re.escape(name)}\s*\(\s*[rb]?[\"']([^\"'\n]{{1,300}})[\"']", view.text):
            here = posixpath.dirname(view.path)
            raw = match.group(1).strip()
            for path in dict.fromkeys([posixpath.normpath(posixpath.join(here, raw)), posixpath.normpath(raw)]):
                if path in view.present:
                    yield make_item(surface, view, path)
                    break


READERS: dict[Read, Reader] = {
    Read.FILE: _read_file, Read.JSON: _read_json, Read.YAML: _read_yaml, Read.FLAGS: _read_flags,
    Read.CALLS: _read_calls, Read.PTH: _read_pth, Read.ENTRY_POINTS: _read_entry_points,
    Read.JSON_HOLDER: _read_json_holder,
    Read.FRONT_MATTER: _read_front_matter,
    Read.ARGS_YAML: _read_args_yaml, Read.FLAG_JSON: _read_flag_json, Read.CALL_PATHS: _read_call_paths,
}
