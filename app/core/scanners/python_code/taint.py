"""Which variables hold downloaded ("fetched") or decoded/obfuscated ("decoded") data.

A cheap, flow-insensitive taint per function scope: a name assigned from a network call,
a decoder or a hidden string anywhere in a function is tainted in that whole function (plus
module-level names). Scopes keep common names such as ``url`` or ``data`` in one function from
tainting unrelated code elsewhere in the module.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from app.core.scanners.python_code import names as pn
from app.core.scanners.python_code.names import Names, is_computed_string

FUNCTION_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
PASSES = 3  # how many assignment hops a label travels (a = fetch(); b = a.read(); c = decode(b))


class Taint:
    def __init__(self, tree: ast.AST, names: Names, outer: dict[str, str] | None = None) -> None:
        self.names = names
        self.module = self._scope(tree, dict(outer or {}))
        self.functions: dict[ast.AST, dict[str, str]] = {
            node: self._scope(node, self.module) for node in ast.walk(tree) if isinstance(node, FUNCTION_SCOPES)
        }

    def in_scope(self, scope: ast.AST | None) -> dict[str, str]:
        return self.functions.get(scope, self.module) if scope is not None else self.module

    def _scope(self, scope: ast.AST, outer: dict[str, str]) -> dict[str, str]:
        tainted = dict(outer)
        nodes = list(own_nodes(scope))
        for _ in range(PASSES):
            for node in nodes:
                if isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr | ast.AugAssign) and node.value:
                    targets: list[ast.expr] = node.targets if isinstance(node, ast.Assign) else [node.target]
                    _mark(targets, label_of(node.value, self.names, tainted), tainted)
                elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                    _mark([node.optional_vars], label_of(node.context_expr, self.names, tainted), tainted)
        return tainted


def own_nodes(scope: ast.AST, nested: tuple[type[ast.AST], ...] = FUNCTION_SCOPES) -> Iterator[ast.AST]:
    """Nodes of a scope, without descending into ``nested`` (functions: scopes of their own)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, nested):
            stack.extend(ast.iter_child_nodes(node))


def _mark(targets: list[ast.expr], label: str | None, tainted: dict[str, str]) -> None:
    if not label:
        return
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name) and tainted.get(sub.id) != "fetched":
                tainted[sub.id] = label


def label_of(node: ast.AST, names: Names, tainted: dict[str, str]) -> str | None:
    """"fetched" when the expression uses downloaded data, "decoded" for decoded/hidden data."""
    label = None
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in tainted:
            if tainted[sub.id] == "fetched":
                return "fetched"
            label = "decoded"
        if isinstance(sub, ast.Call):
            func = names.qualname(sub.func) or ""
            if pn.is_network(func) or func in pn.HUB_DOWNLOAD:
                return "fetched"
            if func in pn.DECODE:
                label = "decoded"
    if label is None and is_computed_string(node, names):
        label = "decoded"
    return label


def label_of_args(call: ast.Call, names: Names, tainted: dict[str, str]) -> str | None:
    labels = {label_of(arg, names, tainted) for arg in (*call.args, *(k.value for k in call.keywords))}
    return "fetched" if "fetched" in labels else ("decoded" if "decoded" in labels else None)
