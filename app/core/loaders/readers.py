"""Read one file as a loader-map surface says, into closure items. Never imports or runs anything.

Each ``Read`` kind has one reader; each ``Form`` says how a value found names its target. Values
that name nothing a runtime would fetch (a local folder, the repo itself, a library the runtime
ships) yield no item.
"""

from __future__ import annotations

import ast
import functools
import json
import posixpath
import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import yaml

from app.core.closure import ClosureItem, Gate
from app.core.loaders.class_ref import parse_ref
from app.core.loaders.fields import values_at
from app.core.loaders.schema import Form, Read, Surface

REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}$")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?::[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)?$")
_QUOTED_REPO = r"""["']([A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96})["']"""
_REPO_KWARGS = ("repo_id", "pretrained_model_name_or_path", "model", "model_name_or_path", "model_id",
                "repo_or_dir", "tokenizer", "repo")
_KW_REPO = re.compile(rf"\b(?:{'|'.join(_REPO_KWARGS)})\s*=\s*{_QUOTED_REPO}")
_FIRST_ARG = re.compile(rf"^\s*{_QUOTED_REPO}")
_REVISION = re.compile(r"""\brevision\s*=\s*["']([\w./-]{1,128})["']""")
_TRUST_KW = re.compile(r"\btrust_remote_code\s*=\s*True\b")
_TRUST_FLAG = re.compile(r"--trust[-_]remote[-_]code\b(?!\s*(?:=\s*)?(?:false|False|0)\b)")
MAX_CALL_ARGS = 800  # characters of a call's argument list read


@dataclass(frozen=True)
class FileView:
    """One file as a reader sees it."""

    path: str
    text: str
    present: frozenset[str]  # every path of the repo
    own_repo: str | None


Reader = Callable[[Surface, FileView], Iterator[ClosureItem]]


def read_surface(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    yield from READERS[surface.read](surface, view)


def _item(surface: Surface, view: FileView, target: str, **extra: Any) -> ClosureItem:
    """An item of ``surface``; ``extra`` fields (``runs`` a value names, a repo) override the surface's."""
    fields: dict[str, Any] = {"runs": surface.runs} | extra
    return ClosureItem(surface.id, surface.runtime, surface.kind, surface.gate, view.path, target, **fields)


# -- readers ----------------------------------------------------------------------------------

def _read_file(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    yield _item(surface, view, view.path)


def _read_json(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    data = parsed_json(view.text)
    if data is not UNPARSED:  # the config scanners report unparseable JSON
        yield from _read_fields(surface, view, data)


def _read_yaml(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    data = parsed_yaml(view.text)
    if data is not UNPARSED:
        yield from _read_fields(surface, view, data)


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
    _at, holder = _holder(data, where)
    revision = holder.get(surface.revision_key) if isinstance(holder, dict) else None
    return revision if isinstance(revision, str) and revision.strip() else None


def _read_flags(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    """``--flag VALUE`` / ``--flag=VALUE``; a field not starting with ``-`` is a command whose first
    argument is the value (``vllm serve org/name``); ``command --flag`` takes the flag only after that
    command on the same command line (``--model`` is every CLI's flag, not only the runtime's)."""
    for command in _commands(view.text):
        trust = surface.carries_trust and bool(_TRUST_FLAG.search(command))
        for field in surface.fields:
            scope, flag = _scoped_flag(field)
            at = _after_command(scope, command) if scope else 0
            if at is None:
                continue
            joiner = r"(?:=|\s+)" if flag.startswith("-") else r"\s+"
            for match in re.finditer(rf"(?:^|[\s`$(]){re.escape(flag)}{joiner}[\"']?([^\s\"'\\`]+)", command[at:]):
                yield from _repo(surface, view, match.group(1), None, trust)


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
            args = _call_args(view.text, match.end())
            repo = pick.search(args) if pick else (_FIRST_ARG.match(args) or _KW_REPO.search(args))
            if repo:
                revision = _REVISION.search(args)
                trust = surface.carries_trust and bool(_TRUST_KW.search(args))
                yield from _repo(surface, view, repo.group(1), revision.group(1) if revision else None, trust)


def _read_pth(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    # site.addpackage: a line starting with "import" followed by a space or tab is exec()'d.
    if any(line.startswith(("import ", "import\t")) for line in view.text.splitlines()):
        yield _item(surface, view, view.path)


def _read_entry_points(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    groups = _toml_entry_points(view.text) if view.path.endswith(".toml") else _text_entry_points(view.text)
    for group, value in groups:
        if group in surface.fields:
            yield from _dotted(surface, view, group, value)


def _read_json_holder(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    """The objects holding the value at each field: ``**.auto_map`` gives every config and sub-config
    (``text_config``, ``llm_config``...) that has an ``auto_map``, wherever it sits."""
    data = parsed_json(view.text)
    if data is UNPARSED:
        return
    for field in surface.fields:
        for where, _value in values_at(data, field):
            at, holder = _holder(data, where)
            if holder is not None:
                yield from FORMS[surface.form](surface, view, at, holder)


def _keyword_values(surface: Surface, view: FileView, field: str, name: str,
                    keyword: str) -> Iterator[ClosureItem]:
    """``name(..., keyword="value")``: the quoted value, read as the surface's form says."""
    pick = re.compile(rf"""\b{re.escape(keyword)}\s*=\s*["']([^"'\n]{{1,200}})["']""")
    for match in re.finditer(rf"(?<![\w]){re.escape(name)}\s*\(", view.text):
        value = pick.search(_call_args(view.text, match.end()))
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
                yield from _repo(surface, view, value, None, trust)


def _read_flag_json(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    """``--flag '{"key": "org/x"}'`` (a field ``--flag:key``), or a keyword ``name={"key": ...}`` in code
    (a field ``name:key``, read over the whole file, as a call spans lines)."""
    for field in surface.fields:
        flag, _, path = field.partition(":")
        units = list(_commands(view.text)) if flag.startswith("-") else [view.text]
        joiner = r"(?:=|\s+)[\"']?" if flag.startswith("-") else r"\s*=\s*"
        for unit in units:
            trust = surface.carries_trust and bool(_TRUST_FLAG.search(unit) or _TRUST_KW.search(unit))
            for match in re.finditer(rf"(?:^|[\s`$(,]){re.escape(flag)}{joiner}(?=\{{)", unit):
                for _where, value in values_at(_literal(unit, match.end()), path):
                    if isinstance(value, str):
                        yield from _repo(surface, view, value, None, trust)


def _read_call_paths(surface: Surface, view: FileView) -> Iterator[ClosureItem]:
    """``name("libops.so")``: the file of this repo the call loads (a path it does not ship names nothing)."""
    for name in surface.fields:
        for match in re.finditer(rf"(?<![\w]){re.escape(name)}\s*\(\s*[rb]?[\"']([^\"'\n]{{1,300}})[\"']", view.text):
            here = posixpath.dirname(view.path)
            raw = match.group(1).strip()
            for path in dict.fromkeys([posixpath.normpath(posixpath.join(here, raw)), posixpath.normpath(raw)]):
                if path in view.present:
                    yield _item(surface, view, path)
                    break


READERS: dict[Read, Reader] = {
    Read.FILE: _read_file, Read.JSON: _read_json, Read.YAML: _read_yaml, Read.FLAGS: _read_flags,
    Read.CALLS: _read_calls, Read.PTH: _read_pth, Read.ENTRY_POINTS: _read_entry_points,
    Read.JSON_HOLDER: _read_json_holder,
    Read.FRONT_MATTER: _read_front_matter,
    Read.ARGS_YAML: _read_args_yaml, Read.FLAG_JSON: _read_flag_json, Read.CALL_PATHS: _read_call_paths,
}


# -- forms --------------------------------------------------------------------------------------

Interpreter = Callable[[Surface, FileView, str, Any], Iterator[ClosureItem]]


def _class_ref(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    for item in value if isinstance(value, list) else [value]:
        if not isinstance(item, str):
            continue  # null slow/fast tokenizer slots; malformed refs are the remote-code scanner's
        ref = parse_ref(where, item)
        if ref.problem or not ref.module:
            continue
        if ref.repo:
            repo, _, revision = ref.repo.partition("@")
            if repo != view.own_repo:
                yield _item(surface, view, item, repo=repo, revision=revision or None, carries_trust=True,
                            local=False)
            continue
        paths = ref.module_paths(view.path)
        yield _item(surface, view, next((p for p in paths if p in view.present), paths[0]))


def _repo_id(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    if isinstance(value, str):
        yield from _repo(surface, view, value, None, surface.carries_trust)


def _diffusers_component(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    """``"unet": ["my_unet", "MyUNet"]``: diffusers imports ``unet/my_unet.py`` when the component's folder has
    it. Any other library name it takes only from the libraries it loads from or from modules the process
    already imported, never by importing a name the repo gives (diffusers 0.42.1 ``_get_library_or_raise``)."""
    if where.startswith("_") or not isinstance(value, list) or len(value) != 2:
        return
    library, cls = value
    if not isinstance(library, str) or not isinstance(cls, str) or library in surface.known:
        return
    target = posixpath.normpath(posixpath.join(posixpath.dirname(view.path), where, library + ".py"))
    if target in view.present:
        yield _item(surface, view, target, runs=(f"{cls}.*",))


COMMUNITY_MIRROR = "diffusers/community-pipelines-mirror"  # a dataset: not a model repo the gate can vet
_COMMUNITY_NAME = re.compile(r"^[A-Za-z_][\w-]{0,95}$")


def _diffusers_pipeline(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    """A custom pipeline (``_class_name: [module, Class]``, ``custom_pipeline=...``), as diffusers resolves it:
    ``module.py`` beside the config, else another repo's ``pipeline.py``, else a community pipeline that
    diffusers fetches from its mirror with no trust_remote_code (``get_cached_module_file``)."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
        module, cls = value[0].strip(), value[1]
    elif isinstance(value, str) and not where.startswith("_"):
        module, cls = value.strip(), ""
    else:
        return  # `_class_name` as a string is a diffusers class
    runs = (f"{cls}.*",) if cls else ("*.__init__", "*.__call__")
    local = posixpath.normpath(posixpath.join(posixpath.dirname(view.path), module.removesuffix(".py") + ".py"))
    if local in view.present:
        yield _item(surface, view, local, runs=runs)
    elif REPO_ID.match(module):
        yield from _repo(surface, view, module, None, True)
    elif _COMMUNITY_NAME.match(module):
        item = _item(surface, view, f"{COMMUNITY_MIRROR}:{module}.py", local=False, runs=runs)
        yield replace(item, gate=Gate.ALWAYS)


def _py_expression(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    """A string the runtime ``eval()``s: each call in it, unless it is the documented ``[torch.]nn.Class(literals)``."""
    if not isinstance(value, str):
        return
    if len(value) > MAX_CALL_ARGS:
        yield _item(surface, view, "<expression too long to read>", local=False)  # eval() reads it all
        return
    try:
        tree = ast.parse(value.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and not _is_nn_call(node):
            yield _item(surface, view, _callee(node.func), local=False)


def _is_nn_call(node: ast.expr) -> bool:
    if not isinstance(node, ast.Call) or _callee(node.func).rpartition(".")[0] not in ("nn", "torch.nn"):
        return False
    return all(isinstance(arg, ast.Constant) for arg in [*node.args, *(k.value for k in node.keywords)])


def _callee(func: ast.expr) -> str:
    """``os.system`` for ``os.system``, ``__import__("os").system`` and ``builtins.exec`` for ``exec``."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id if parts else f"builtins.{func.id}")
    elif (isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "__import__"
          and func.args and isinstance(func.args[0], ast.Constant) and isinstance(func.args[0].value, str)):
        parts.append(func.args[0].value)
    else:
        parts.append("<expression>")
    return ".".join(reversed(parts))


_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")


def _ultralytics_layer(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    """A model-YAML layer: ``nn.X`` (torch.nn), ``torchvision.ops.X``, else any name in ``ultralytics.nn.tasks``'
    globals, called with the YAML's arguments (``parse_model``); only the layer classes are ``known``."""
    if not isinstance(value, str) or value in surface.known or not _IDENTIFIER.match(value):
        return  # `nn.`/`torchvision.ops.` names and anything not an identifier are not looked up in the globals
    yield _item(surface, view, f"ultralytics.nn.tasks.{value}", local=False)


def _keras_object(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    """A serialized Keras object: ``module`` + ``class_name`` (a function's name is its ``config``)."""
    if not isinstance(value, dict):
        return
    module, name = value.get("module"), value.get("class_name")
    if name == "function":
        name = value.get("config")
        if module == "builtins":
            return  # deserialize_keras_object looks builtin function names up in Keras' own modules
    if not isinstance(module, str) or not isinstance(name, str) or module.split(".")[0] in surface.known:
        return
    target = f"{module}.{name}"
    if _DOTTED.match(target):
        yield _item(surface, view, target, local=False)


def _dotted_form(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    if isinstance(value, str):
        yield from _dotted(surface, view, where, value)


def _dotted(surface: Surface, view: FileView, where: str, value: str) -> Iterator[ClosureItem]:
    """``pkg.module.Callable`` or ``module:attr``: a module of this repo when one matches, else a library."""
    value = value.strip()
    if not _DOTTED.match(value):
        return
    module, _, attr = value.replace(":", ".").rpartition(".")
    for path in _module_files(view.path, module):
        if path in view.present:
            yield _item(surface, view, path, runs=(attr or "*",))
            return
    if not _is_known(value.replace(":", "."), surface.known):
        yield _item(surface, view, value, local=False)


def _is_known(dotted: str, known: tuple[str, ...]) -> bool:
    """A library the runtime names: ``torch`` or a narrower prefix such as ``torch.optim``."""
    return any(dotted == k or dotted.startswith(k + ".") for k in known)


def _module_files(config_path: str, module: str) -> list[str]:
    rel = module.replace(".", "/")
    here = posixpath.dirname(config_path)
    names = [rel + ".py", rel + "/__init__.py"]
    return list(dict.fromkeys([posixpath.normpath(posixpath.join(here, n)) for n in names] + names))


def _package(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    if isinstance(value, str) and value.strip():
        yield _item(surface, view, value.strip(), local=False)


def _self(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    yield _item(surface, view, view.path)


def _auto_map_home(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    """``AutoModel*.from_config(config)`` fetches an ``auto_map`` module that names no repo from
    ``config.name_or_path``: the config's own ``_name_or_path`` key, which overrides the path loaded."""
    if not isinstance(value, dict) or not isinstance(value.get("auto_map"), dict):
        return
    home = value.get("_name_or_path")
    if not isinstance(home, str):
        return
    for key, ref in value["auto_map"].items():
        if str(key).startswith("AutoModel") and isinstance(ref, str) and "--" not in ref:
            for item in _repo(surface, view, home, None, surface.carries_trust):
                yield replace(item, target=f"{item.target}--{ref}")


def _st_module(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    """A ``modules.json`` type: the library's own classes; ``module.Class`` or ``org/name--module.Class``
    through transformers' dynamic modules; any deeper dotted path imported as an installed module."""
    if not isinstance(value, str) or value.split(".")[0] in surface.known:
        return
    if "--" in value or value.count(".") == 1:
        yield from _class_ref(surface, view, where, value)
    else:
        yield from _dotted(surface, view, where, value)


def _repo_file(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    if isinstance(value, str) and value.strip():
        yield _item(surface, view, posixpath.normpath(posixpath.join(posixpath.dirname(view.path), value.strip())))


FORMS: dict[Form, Interpreter] = {
    Form.CLASS_REF: _class_ref, Form.REPO_ID: _repo_id, Form.DIFFUSERS_COMPONENT: _diffusers_component,
    Form.DOTTED: _dotted_form, Form.MODULE_PATH: _package, Form.PACKAGE: _package, Form.SELF: _self,
    Form.AUTO_MAP_HOME: _auto_map_home, Form.ST_MODULE: _st_module, Form.REPO_FILE: _repo_file,
    Form.DIFFUSERS_PIPELINE: _diffusers_pipeline, Form.PY_EXPRESSION: _py_expression,
    Form.ULTRALYTICS_LAYER: _ultralytics_layer, Form.KERAS_OBJECT: _keras_object,
}


# -- helpers ------------------------------------------------------------------------------------

def _repo(surface: Surface, view: FileView, value: str, revision: str | None,
          trust: bool) -> Iterator[ClosureItem]:
    """An ``org/name`` value that is another Hub repo: not a path of this repo, not the repo itself."""
    value = value.strip().removeprefix("hf://").removeprefix("https://huggingface.co/")
    value = value.split(":", 1)[0] if "://" not in value else value  # `org/kernel@rev:function` (hub kernels)
    name, _, pinned = value.partition("@")
    if not REPO_ID.match(name) or name == view.own_repo or _is_local(name, view):
        return
    yield _item(surface, view, name, repo=name, revision=revision or pinned or None, carries_trust=trust,
                local=False)


def _is_local(value: str, view: FileView) -> bool:
    here = posixpath.dirname(view.path)
    folders = (value, posixpath.join(here, value)) if here else (value,)
    return any(p == f or p.startswith(f + "/") for f in folders for p in view.present) or value.startswith(".")


def _holder(data: Any, where: str) -> tuple[str, Any]:
    """The object that holds the value at dotted ``where`` (keys with dots in them: None)."""
    parts = where.split(".")[:-1]
    node = data
    for part in parts:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return where, None
    return ".".join(parts), node


def _commands(text: str) -> Iterator[str]:
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


def _literal(text: str, start: int) -> Any:
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


def _call_args(text: str, start: int) -> str:
    """The argument text of a call, up to its closing parenthesis (nested ones kept), bounded."""
    depth, end = 1, start
    limit = min(len(text), start + MAX_CALL_ARGS)
    while end < limit and depth:
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    return text[start:end - 1 if depth == 0 else end]


def _toml_entry_points(text: str) -> list[tuple[str, str]]:
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


def _text_entry_points(text: str) -> list[tuple[str, str]]:
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
