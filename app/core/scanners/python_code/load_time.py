"""Which functions of a module run while a runtime loads it, not only ``__init__``.

``trust_remote_code`` imports the module (module and class bodies, decorators), then calls what
transformers' loaders call on the classes it names: config, model, tokenizer and processor
construction and their ``from_pretrained`` paths, ``post_init`` -> ``init_weights`` ->
``_init_weights``, ``tie_weights`` and the embedding getters it uses, properties the loaders read.
vLLM's ``trust_remote_code`` path goes through the same transformers classes. Any function those
call, found by name in the same module (``f()``, ``self.m()``, ``cls.m()``, ``Class()``), runs then
too. ``setup.py`` and in-tree build backends run whole when pip builds the package.

Beyond the hand list, ``data/load_time_methods.json`` names every method
``scripts/derive_load_methods.py`` found transformers calling on user classes while it loads
(``to_dict``, ``__repr__`` via ``logger.info(f"Model config {config}")``, ``get_text_config``...), and
the protocol methods Python itself calls: a module-level ``__getattr__`` (transformers getattr()s the
class from the module), a metaclass's ``__call__``.
"""

from __future__ import annotations

import ast
import fnmatch
import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from app.core.scanners.python_code.taint import own_nodes

DATA_FILE = Path(__file__).parents[1] / "data" / "load_time_methods.json"
# The floor: never shrinks, whatever the derived data says.
HAND_METHODS = frozenset({
    "__init__", "__new__", "__post_init__", "__init_subclass__", "__set_name__", "__class_getitem__",
    "__setstate__", "__getattr__",
    # transformers: PreTrainedModel / PretrainedConfig / tokenizers / processors while loading
    "from_pretrained", "_from_pretrained", "from_config", "_from_config", "from_dict", "from_json_file",
    "get_config_dict", "_get_config_dict", "_load_pretrained_model", "post_init", "init_weights",
    "_init_weights", "_initialize_weights", "tie_weights", "_tie_or_clone_weights", "get_input_embeddings",
    "get_output_embeddings", "_autoset_attn_implementation", "_check_and_adjust_attn_implementation",
    "_fix_state_dict_key_on_load", "_get_arguments_from_pretrained", "register_for_auto_class",
    "get_vocab", "_add_tokens", "add_special_tokens", "load_vocab", "_tokenize",
})
MODULE_GETATTR_REASON = "module-level __getattr__: transformers getattr()s the class from the module"
METACLASS_BASES = frozenset({"type", "ABCMeta", "abc.ABCMeta", "EnumMeta", "enum.EnumMeta", "EnumType"})


@cache
def load_time_data() -> tuple[dict[str, str], dict[str, str]]:
    """(method -> why, for methods of any class; metaclass method -> why), from the shipped data."""
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    methods = {name: f"{entry['runtime'].split()[0]} calls it while loading (from {entry['function']})"
               for name, entry in data["derived"].items()}
    metaclass: dict[str, str] = {}
    for name, entry in data["protocol"].items():
        scopes = entry["scope"].split()
        if "class" in scopes:
            methods[name] = entry["reason"]
        if "metaclass" in scopes or "class" in scopes:
            metaclass[name] = entry["reason"]
    return methods, metaclass


def _method_reason(name: str) -> str | None:
    if name in HAND_METHODS:
        return f"{name} runs while the class is loaded"
    return load_time_data()[0].get(name)


LOAD_TIME_METHODS = HAND_METHODS | frozenset(load_time_data()[0])
PROPERTY_DECORATORS = frozenset({"property", "cached_property", "functools.cached_property"})
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
Function = ast.FunctionDef | ast.AsyncFunctionDef


def _index(tree: ast.Module) -> tuple[dict[ast.AST, str], dict[str, list[ast.AST]], set[str]]:
    functions = {node: name for node, name in _defined(tree.body, "")}
    by_name: dict[str, list[ast.AST]] = {}  # "f" module functions, ".m" methods, "Class.m"
    for node, qual in functions.items():
        if "." in qual:
            by_name.setdefault("." + qual.rsplit(".", 1)[-1], []).append(node)
        by_name.setdefault(qual, []).append(node)
    classes = {qual.rsplit(".", 2)[-2] for qual in functions.values() if "." in qual}
    classes |= {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
    return functions, by_name, classes


def reachable_from(tree: ast.Module) -> dict[str, list[ast.AST]]:
    """For each module function, class (its constructor) and ``Class.method``: what calling it runs."""
    functions, by_name, classes = _index(tree)
    callees = {fn: list(dict.fromkeys(_called_from(own_nodes(fn, FUNCTIONS), by_name, classes))) for fn in functions}
    starts: dict[str, list[ast.AST]] = {qual: [node] for node, qual in functions.items()}
    for cls in classes:
        starts[cls] = by_name.get(f"{cls}.__init__", []) + by_name.get(f"{cls}.__new__", [])
    out: dict[str, list[ast.AST]] = {}
    for name, roots in starts.items():
        seen, queue = set(roots), list(roots)
        while queue:
            for callee in callees.get(queue.pop(), ()):
                if callee not in seen:
                    seen.add(callee)
                    queue.append(callee)
        out[name] = list(seen)
    return out


def load_time_functions(tree: ast.Module, everything: bool = False,
                        runtime_roots: tuple[tuple[str, str], ...] = ()) -> dict[ast.AST, str]:
    """Function nodes that run at load, each with why (``"called from XModel.__init__"``).

    ``runtime_roots``: (pattern, why) for what a runtime calls besides the usual loader methods
    (the loader map's ``runs``: ``EndpointHandler.__call__``, ``MyUNet.*``, ``*``).
    """
    functions, by_name, classes = _index(tree)
    metaclasses = _metaclasses(tree)
    reasons: dict[ast.AST, str] = {}
    queue: list[ast.AST] = []
    for node, qual in functions.items():
        why = "install time" if everything else (_runtime_reason(qual, runtime_roots)
                                                 or _root_reason(node, qual, metaclasses))  # type: ignore[arg-type]
        if why:
            reasons[node] = why
            queue.append(node)
    for callee in _called_from(_module_level_nodes(tree), by_name, classes):
        if callee not in reasons:
            reasons[callee] = "called at import"
            queue.append(callee)
    while queue:
        caller = queue.pop()
        for callee in _called_from(own_nodes(caller, FUNCTIONS), by_name, classes):
            if callee not in reasons:
                reasons[callee] = f"called from {functions.get(caller, '?')}"
                queue.append(callee)
    return reasons


def _defined(body: list[ast.stmt], prefix: str) -> Iterator[tuple[ast.AST, str]]:
    """Functions at module level and in (nested) class bodies, with dotted names."""
    for stmt in body:
        if isinstance(stmt, FUNCTIONS):
            yield stmt, prefix + stmt.name
        elif isinstance(stmt, ast.ClassDef):
            yield from _defined(stmt.body, f"{prefix}{stmt.name}.")
        elif isinstance(stmt, ast.If | ast.Try | ast.With) and not _is_main_guard(stmt):
            yield from _defined(_blocks(stmt), prefix)


def _blocks(stmt: ast.If | ast.Try | ast.With) -> list[ast.stmt]:
    out = list(stmt.body)
    out += getattr(stmt, "orelse", []) + getattr(stmt, "finalbody", [])
    for handler in getattr(stmt, "handlers", []):
        out += handler.body
    return out


def _runtime_reason(qual: str, roots: tuple[tuple[str, str], ...]) -> str | None:
    for pattern, why in roots:
        if fnmatch.fnmatchcase(qual, pattern):
            return why
    return None


def _root_reason(node: Function, qual: str, metaclasses: frozenset[str] = frozenset()) -> str | None:
    if "." not in qual:  # module-level function: only when something calls it, or getattr(module, ...)
        return MODULE_GETATTR_REASON if node.name == "__getattr__" else None
    owner = qual.rsplit(".", 2)[-2]
    if owner in metaclasses and node.name in load_time_data()[1]:
        return f"metaclass hook: {load_time_data()[1][node.name]}"
    why = _method_reason(node.name)
    if why:
        return why
    for deco in node.decorator_list:
        text = ast.unparse(deco)
        if text in PROPERTY_DECORATORS or text.endswith(".setter"):
            return "property read by the loaders"
    return None


def _metaclasses(tree: ast.Module) -> frozenset[str]:
    """Classes of this module that are metaclasses: named in ``metaclass=`` or subclassing ``type``."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            found.update(ast.unparse(k.value).rsplit(".", 1)[-1] for k in node.keywords if k.arg == "metaclass")
            if any(ast.unparse(b) in METACLASS_BASES for b in node.bases):
                found.add(node.name)
    return frozenset(found)


def _module_level_nodes(tree: ast.Module) -> Iterator[ast.AST]:
    """What runs on import: module and class bodies, decorators and defaults, not function bodies."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_main_guard(node):
            stack.extend(node.orelse)
            continue
        yield node
        if isinstance(node, FUNCTIONS):
            stack.extend([*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d)])
        elif isinstance(node, ast.Lambda):
            continue
        else:
            stack.extend(ast.iter_child_nodes(node))


def _called_from(nodes: Iterator[ast.AST], by_name: dict[str, list[ast.AST]],
                 classes: set[str]) -> Iterator[ast.AST]:
    for node in nodes:
        if isinstance(node, DEFINITIONS):
            for deco in node.decorator_list:  # a decorator runs when the def/class statement runs
                yield from by_name.get(_callee_name(deco) or "", [])
            if isinstance(node, FUNCTIONS):
                continue
        if not isinstance(node, ast.Call):
            continue
        name = _callee_name(node.func)
        if not name:
            continue
        if name in classes:  # constructing a class of this module runs its __init__/__new__
            yield from by_name.get(f"{name}.__init__", []) + by_name.get(f"{name}.__new__", [])
        yield from by_name.get(name, [])


def _callee_name(func: ast.AST) -> str | None:
    """``f`` / ``Class`` for plain calls, ``m`` for ``self.m()``, ``cls.m()``, ``super().m()``."""
    if isinstance(func, ast.Call):  # @decorator(args): the factory runs
        return _callee_name(func.func)
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        owner = func.value
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
            return "." + func.attr
        if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
            return "." + func.attr
        if isinstance(owner, ast.Name):
            return f"{owner.id}.{func.attr}"
    return None


def _is_main_guard(stmt: ast.AST) -> bool:
    if not isinstance(stmt, ast.If):
        return False
    test = stmt.test
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )
