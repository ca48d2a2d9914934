"""How a value found in a file names what a runtime imports, runs or fetches (the loader map's ``form``)."""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from app.core.closure import ClosureItem, Gate
from app.core.loaders.class_ref import parse_ref
from app.core.loaders.schema import Form, Surface
from app.core.loaders.text_shapes import MAX_CALL_ARGS
from app.core.loaders.view import REPO_ID, FileView, make_item, repo_items

_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?::[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)?$")


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
                yield make_item(surface, view, item, repo=repo, revision=revision or None, carries_trust=True,
                            local=False)
            continue
        paths = ref.module_paths(view.path)
        yield make_item(surface, view, next((p for p in paths if p in view.present), paths[0]))


def _repo_id(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    if isinstance(value, str):
        yield from repo_items(surface, view, value, None, surface.carries_trust)


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
        yield make_item(surface, view, target, runs=(f"{cls}.*",))


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
        yield make_item(surface, view, local, runs=runs)
    elif REPO_ID.match(module):
        yield from repo_items(surface, view, module, None, True)
    elif _COMMUNITY_NAME.match(module):
        item = make_item(surface, view, f"{COMMUNITY_MIRROR}:{module}.py", local=False, runs=runs)
        yield replace(item, gate=Gate.ALWAYS)


def _py_expression(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    """A string the runtime ``eval()``s: each call in it, unless it is the documented ``[torch.]nn.Class(literals)``."""
    if not isinstance(value, str):
        return
    if len(value) > MAX_CALL_ARGS:
        yield make_item(surface, view, "<expression too long to read>", local=False)  # eval() reads it all
        return
    try:
        tree = ast.parse(value.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and not _is_nn_call(node):
            yield make_item(surface, view, _callee(node.func), local=False)


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
    yield make_item(surface, view, f"ultralytics.nn.tasks.{value}", local=False)


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
        yield make_item(surface, view, target, local=False)


def _dotted_form(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    if isinstance(value, str):
        yield from dotted(surface, view, where, value)


def dotted(surface: Surface, view: FileView, where: str, value: str) -> Iterator[ClosureItem]:
    """``pkg.module.Callable`` or ``module:attr``: a module of this repo when one matches, else a library."""
    value = value.strip()
    if not _DOTTED.match(value):
        return
    module, _, attr = value.replace(":", ".").rpartition(".")
    for path in _module_files(view.path, module):
        if path in view.present:
            yield make_item(surface, view, path, runs=(attr or "*",))
            return
    if not _is_known(value.replace(":", "."), surface.known):
        yield make_item(surface, view, value, local=False)


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
        yield make_item(surface, view, value.strip(), local=False)


def _self(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    yield make_item(surface, view, view.path)


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
            for item in repo_items(surface, view, home, None, surface.carries_trust):
                yield replace(item, target=f"{item.target}--{ref}")


def _st_module(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    """A ``modules.json`` type: the library's own classes; ``module.Class`` or ``org/name--module.Class``
    through transformers' dynamic modules; any deeper dotted path imported as an installed module."""
    if not isinstance(value, str) or value.split(".")[0] in surface.known:
        return
    if "--" in value or value.count(".") == 1:
        yield from _class_ref(surface, view, where, value)
    else:
        yield from dotted(surface, view, where, value)


def _repo_file(surface: Surface, view: FileView, where: str, value: Any) -> Iterator[ClosureItem]:
    if isinstance(value, str) and value.strip():
        yield make_item(surface, view, posixpath.normpath(posixpath.join(posixpath.dirname(view.path), value.strip())))


FORMS: dict[Form, Interpreter] = {
    Form.CLASS_REF: _class_ref, Form.REPO_ID: _repo_id, Form.DIFFUSERS_COMPONENT: _diffusers_component,
    Form.DOTTED: _dotted_form, Form.MODULE_PATH: _package, Form.PACKAGE: _package, Form.SELF: _self,
    Form.AUTO_MAP_HOME: _auto_map_home, Form.ST_MODULE: _st_module, Form.REPO_FILE: _repo_file,
    Form.DIFFUSERS_PIPELINE: _diffusers_pipeline, Form.PY_EXPRESSION: _py_expression,
    Form.ULTRALYTICS_LAYER: _ultralytics_layer, Form.KERAS_OBJECT: _keras_object,
}
