"""Constant folding over Python source: what a string, bytes or int expression evaluates to, statically.

Attackers build call targets and payloads from pieces so that no literal names them:
``"sy" + "stem"``, ``"".join(chr(c) for c in [...])``, ``bytes([...]).decode()``,
``codecs.decode("flfgrz", "rot13")``, ``base64.b64decode(...)``, ``bytes.fromhex(...)``,
f-strings of constants, names bound to any of these. Folding only ever evaluates pure
operations on constants (string methods, decoders, bounded decompression); nothing is imported,
called or executed. Values are capped in size, expressions in depth, and every operation that
could build more than the cap (``join``, ``replace``, comprehensions, f-strings) is bounded
before it runs; one module's folding may build ``MAX_FOLDED_TOTAL`` characters in all (past it,
what is left folds to nothing: unknown, as a value built at run time is). The operations
themselves, and the per-value caps, are ``fold_values``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.core.scanners.python_code.fold_values import (
    MAX_VALUE,
    MAX_WEIGHT,
    Folded,
    Value,
    capped,
    fold_binop,
    fold_function,
    fold_method,
    items_of,
    weight_of,
)

if TYPE_CHECKING:
    from app.core.scanners.python_code.names import Names

MAX_DEPTH = 40  # nested expressions followed
MAX_FOLDED_TOTAL = 8 * 1024 * 1024  # characters/bytes/items all folded values of one module may hold


class Constants:
    """Folds expressions of one module; names bound once (anywhere) to a foldable value resolve."""

    def __init__(self, nodes: list[ast.AST], names: Names) -> None:
        """``nodes``: every node of the module (``list(ast.walk(tree))``)."""
        self.names = names
        self._bound: dict[str, list[ast.expr]] = {}
        for node in nodes:
            kind = type(node)
            if kind is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:  # type: ignore[attr-defined]
                self._bound.setdefault(node.targets[0].id, []).append(node.value)  # type: ignore[attr-defined]
            elif kind is ast.AnnAssign and node.value is not None and type(node.target) is ast.Name:  # type: ignore[attr-defined]
                self._bound.setdefault(node.target.id, []).append(node.value)  # type: ignore[attr-defined]
            elif kind in _REBINDING:
                for name in _bound_names(node):
                    self._bound.setdefault(name, []).append(ast.Constant(None))  # not one value
        self._memo: dict[int, Folded | None] = {}
        self._active: set[str] = set()
        self._spent = 0  # weight of every value folded so far (MAX_FOLDED_TOTAL)

    def bound_once(self, name: str) -> bool:
        """Bound by exactly one assignment and by no loop, parameter or augmented assignment."""
        return len(self._bound.get(name, ())) == 1

    def binding(self, name: str) -> ast.expr | None:
        """The one expression a name is bound to, when it is bound exactly once."""
        values = self._bound.get(name, [])
        return values[0] if len(values) == 1 else None

    def fold(self, node: ast.AST, scope: dict[str, Value] | None = None, depth: int = 0) -> Folded | None:
        """The constant value of an expression, or None when it depends on anything else."""
        if depth > MAX_DEPTH or self._spent > MAX_FOLDED_TOTAL:
            return None
        if scope:
            return self._spend(capped(self._fold(node, scope, depth)))
        key = id(node)
        if key not in self._memo:
            self._memo[key] = self._spend(capped(self._fold(node, {}, depth)))
        return self._memo[key]

    def _spend(self, folded: Folded | None) -> Folded | None:
        if folded is not None and folded.computed:
            self._spent += weight_of(folded.value)
        return folded if self._spent <= MAX_FOLDED_TOTAL else None

    def text(self, node: ast.AST) -> Folded | None:
        """Folded to a str (bytes are read as UTF-8, as ``exec``/``compile`` would)."""
        folded = self.fold(node)
        if folded and isinstance(folded.value, bytes):
            try:
                return Folded(folded.value.decode("utf-8"), folded.computed)
            except UnicodeDecodeError:
                return None
        return folded if folded and isinstance(folded.value, str) else None

    # -- one node ---------------------------------------------------------------------------

    def _fold(self, node: ast.AST, scope: dict[str, Value], depth: int) -> Folded | None:
        def sub(child: ast.AST) -> Folded | None:
            return self.fold(child, scope, depth + 1)

        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, str | bytes | int):
                return None
            return Folded(value, False)
        if isinstance(node, ast.Name):
            return self._name(node.id, scope, depth)
        if isinstance(node, ast.List | ast.Tuple):
            items = [sub(e) for e in node.elts]
            if any(i is None for i in items):
                return None
            return Folded(tuple(i.value for i in items if i), True)
        if isinstance(node, ast.BinOp):
            return fold_binop(node.op, sub(node.left), sub(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Invert):
            operand = sub(node.operand)
            if operand is None or not isinstance(operand.value, int):
                return None
            return Folded(-operand.value if isinstance(node.op, ast.USub) else ~operand.value, operand.computed)
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, sub)
        if isinstance(node, ast.Subscript):
            return _subscript(sub(node.value), node.slice, sub)
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            return self._comprehension(node, scope, depth)
        if isinstance(node, ast.Call):
            return self._call(node, sub, scope, depth)
        return None

    def _name(self, name: str, scope: dict[str, Value], depth: int) -> Folded | None:
        if name in scope:
            return Folded(scope[name], True)
        values = self._bound.get(name)
        if not values or len(values) != 1 or name in self._active:
            return None  # unbound, rebound, or defined through itself
        self._active.add(name)
        try:
            folded = self.fold(values[0], None, depth + 1)
        finally:
            self._active.discard(name)
        if folded is None:
            return None
        return Folded(folded.value, folded.computed or not isinstance(values[0], ast.Constant))

    def _fstring(self, node: ast.JoinedStr, sub: Callable[[ast.AST], Folded | None]) -> Folded | None:
        parts: list[str] = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                if value.format_spec is not None or value.conversion not in (-1, ord("s")):
                    return None
                inner = sub(value.value)
                if inner is None or not isinstance(inner.value, str | int):
                    return None
                parts.append(str(inner.value))
            else:
                literal = sub(value)
                if literal is None or not isinstance(literal.value, str):
                    return None
                parts.append(literal.value)
            if sum(map(len, parts)) > MAX_VALUE:
                return None
        return Folded("".join(parts), True)

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp, scope: dict[str, Value],
                       depth: int) -> Folded | None:
        if len(node.generators) != 1:
            return None
        gen = node.generators[0]
        if gen.ifs or gen.is_async or not isinstance(gen.target, ast.Name):
            return None
        items = items_of(self.fold(gen.iter, scope, depth + 1))
        if items is None:
            return None
        out: list[Value] = []
        weight = 0
        for item in items:
            folded = self.fold(node.elt, {**scope, gen.target.id: item}, depth + 1)
            if folded is None:
                return None
            weight += weight_of(folded.value)
            if weight > MAX_WEIGHT:
                return None  # checked as it grows: a comprehension of long strings is not built whole
            out.append(folded.value)
        return Folded(tuple(out), True)

    def _call(self, node: ast.Call, sub: Callable[[ast.AST], Folded | None], scope: dict[str, Value],
              depth: int) -> Folded | None:
        if node.keywords:
            return None
        if len(node.args) == 2 and self.names.qualname(node.func) == "map":
            iterable = sub(node.args[1])
            return self._map(node.args[0], iterable.value) if iterable else None
        args = [sub(a) for a in node.args]
        if any(a is None for a in args):
            return None
        values = [a.value for a in args if a]
        if isinstance(node.func, ast.Attribute):
            owner = self.fold(node.func.value, scope, depth + 1)
            if owner is not None:
                return fold_method(owner.value, node.func.attr, values)
        return fold_function(self.names.qualname(node.func) or "", values)

    def _map(self, func_node: ast.AST, iterable: Value) -> Folded | None:
        items = items_of(Folded(iterable, True))
        func = self.names.qualname(func_node) or ""
        if items is None:
            return None
        out = [fold_function(func, [i]) for i in items]
        if any(o is None for o in out):
            return None
        return Folded(tuple(o.value for o in out if o), True)


_REBINDING = {ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr, ast.arg, ast.comprehension}


def _bound_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.arg):
        return [node.arg]
    target = getattr(node, "target", None)
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)] if target is not None else []


def _subscript(owner: Folded | None, index: ast.AST, sub: Callable[[ast.AST], Folded | None]) -> Folded | None:
    if owner is None or isinstance(owner.value, int):
        return None
    value = owner.value
    if isinstance(index, ast.Slice):
        bounds = [sub(b) if b is not None else None for b in (index.lower, index.upper, index.step)]
        parts = [b.value if b is not None else None for b in bounds]
        ints = [p for p in parts if isinstance(p, int)]
        if len(ints) != sum(p is not None for p in parts) or parts[2] == 0:
            return None
        if any(b is None and n is not None for b, n in zip(bounds, (index.lower, index.upper, index.step),
                                                             strict=True)):
            return None
        return Folded(value[slice(*parts)], True)  # type: ignore[arg-type]  # ints or None, checked above
    key = sub(index)
    if key is None or not isinstance(key.value, int) or not -len(value) <= key.value < len(value):
        return None
    return Folded(value[key.value], True)


