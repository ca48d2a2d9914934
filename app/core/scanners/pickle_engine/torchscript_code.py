"""Read a TorchScript archive's ``code/**/*.py`` for what its functions can call.

torch/csrc/jit/serialization/import_source.cpp ``parseSourceIfNeeded`` reads each file with
TorchScript's own lexer: an optional ``op_version_set = N``, ``import`` lines (skipped), then
only ``class`` and ``def``; names resolve in a fixed environment (``torch`` -> aten builtins,
``ops`` -> registered operators, ``CONSTANTS``, ``__torch__`` -> the archive's own classes,
``fork``/``annotate``/...). The serialized code is Python syntax (python_print.cpp writes it), so
it is parsed with ``ast`` here: never imported, never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from app.core.scanners.pickle_engine import torchscript_ops as ts_ops
from app.core.scanners.pickle_engine.torchscript_ops import OpJudgement

# Python builtins the TorchScript compiler has no binding for (ir_emitter / resolver): code that
# calls them fails to compile, so the load fails; it only ever ran as Python.
REFUSED_BUILTINS = frozenset({"open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars",
                              "input", "breakpoint", "setattr", "delattr", "memoryview", "exit", "quit"})
_INTROSPECTION = frozenset({"__class__", "__globals__", "__subclasses__", "__builtins__", "__bases__", "__mro__",
                            "__code__", "__dict__", "__getattribute__", "__reduce__", "__reduce_ex__"})
_TOP_LEVEL = (ast.ClassDef, ast.FunctionDef, ast.Import, ast.ImportFrom)


@dataclass(frozen=True)
class CodeUse:
    """One thing the code reaches: an operator or TorchBind class judged by name, or a refused construct."""

    what: str  # e.g. "ops.acme.fused(...)" as written
    judgement: OpJudgement | None  # None for a construct torch.jit refuses
    line: int
    refused: str = ""  # why torch.jit refuses it


def analyse(source: str) -> list[CodeUse]:
    """Every operator, TorchBind class and refused construct in one code file. Raises SyntaxError."""
    tree = ast.parse(source)
    methods = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    uses = list(_top_level(tree))
    for node in ast.walk(tree):
        uses.extend(_uses(node, methods))
    return sorted(uses, key=lambda u: (u.line, u.what))


def _top_level(tree: ast.Module) -> Iterator[CodeUse]:
    for node in tree.body:
        if isinstance(node, _TOP_LEVEL) or _is_version_line(node):
            continue
        yield CodeUse(type(node).__name__, None, node.lineno,
                      "a module-level statement: the code importer accepts only class and def here")


def _is_version_line(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "op_version_set")


def _uses(node: ast.AST, methods: set[str]) -> Iterator[CodeUse]:
    line = getattr(node, "lineno", 0)
    if isinstance(node, ast.Attribute):
        chain = dotted(node)
        if node.attr in _INTROSPECTION:
            yield CodeUse(chain or f"?.{node.attr}", None, line, f"{node.attr} is Python introspection")
        judged = _judge_chain(chain) if chain else None
        if judged is not None:
            yield CodeUse(chain or "", judged, line)
    elif isinstance(node, ast.Call):
        yield from _call(node, methods, line)
    elif isinstance(node, (ast.Lambda, ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await,
                           ast.AsyncFunctionDef)):
        yield CodeUse(type(node).__name__, None, line, "Python syntax TorchScript does not compile")


def _call(node: ast.Call, methods: set[str], line: int) -> Iterator[CodeUse]:
    func = node.func
    if isinstance(func, ast.Name) and func.id in REFUSED_BUILTINS:
        yield CodeUse(f"{func.id}(...)", None, line, f"{func.id} is a Python builtin TorchScript has no binding for")
    if isinstance(func, ast.Attribute) and _root(func) not in ("torch", "ops", "__torch__"):
        yield from _method(func, methods, line)  # on a value (no root name too): a method call


def _method(func: ast.Attribute, methods: set[str], line: int) -> Iterator[CodeUse]:
    """``<value>.<name>(...)``: a method of the archive's classes, or an aten method of a tensor/RRef."""
    name = func.attr
    if name in methods:
        return  # one of the archive's own methods (its body is read as well)
    if _system_name(name):
        yield CodeUse(f"<value>.{name}(...)", ts_ops.judge_op("aten", name), line)


def _judge_chain(chain: str) -> OpJudgement | None:
    parts = chain.split(".")
    if parts[0] == "__torch__":
        parts = parts[1:]  # __torch__.torch.classes.<ns>.<C>: a TorchBind class
    if len(parts) >= 4 and parts[:2] == ["torch", "classes"]:
        return ts_ops.judge_class(parts[2], parts[3])
    if len(parts) >= 4 and parts[:2] == ["torch", "ops"]:
        return ts_ops.judge_op(parts[2], parts[3])
    if len(parts) >= 3 and parts[0] == "ops":
        return ts_ops.judge_op(parts[1], parts[2])
    if parts[0] == "torch" and chain.startswith("torch.") and (len(parts) == 2 or _system_name(parts[-1])):
        judged = ts_ops.judge_op("aten", parts[-1])  # torch.save, torch.distributed.rpc.rpc_async
        return judged if judged.risk is not ts_ops.OpRisk.BUILTIN else None
    return None


def _system_name(name: str) -> bool:
    return name in ts_ops.FILE_OPS or name in ts_ops.NETWORK_OPS


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes over a name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _root(node: ast.Attribute) -> str | None:
    chain = dotted(node)
    return chain.split(".", 1)[0] if chain else None
