"""Constant folding over a Jinja AST: the strings an expression can build, without rendering.

An exploit hides ``__class__`` by building it at render time: ``'_' * 2 ~ 'class' ~ '_' * 2``,
``'%c%c' % (95, 95)``, ``['_', '_']|join``, ``'__ssalc__'|reverse``, or through ``{% set %}``
and ``namespace()`` attributes. ``Folder`` evaluates only constant strings and numbers with
pure Python string operations, so every value it returns is something the template could build
from its own text. Values are sets (a variable may be set in several branches or loop turns),
bounded in count and length so a hostile template cannot make folding expensive.
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Callable, Iterable

from jinja2 import nodes

Value = str | int | float | bool
Values = frozenset[Value]

MAX_VALUES = 32  # possible values kept per expression
MAX_CHARS = 4096  # longest string built
MAX_STEPS = 200_000  # combinations tried per template; past it the template is reported, not folded
LOOP_ROUNDS = 3  # re-folds of the template so loop accumulators (`ns.s = ns.s ~ x`) settle
_NOTHING: Values = frozenset()

# Jinja string filters folded as Python does them; anything else is unknown.
_STRING_FILTERS: dict[str, Callable[[str], str]] = {
    "lower": str.lower, "upper": str.upper, "title": str.title, "capitalize": str.capitalize,
    "trim": str.strip, "string": str, "e": str, "escape": str, "safe": str,
    "reverse": lambda s: s[::-1], "first": lambda s: s[:1], "last": lambda s: s[-1:],
}
_STRING_METHODS = {"lower", "upper", "title", "capitalize", "strip", "lstrip", "rstrip", "replace",
                   "join", "format", "swapcase"}


def _bounded(values: Iterable[Value]) -> Values:
    kept = [v for v in itertools.islice(values, MAX_VALUES * 4)
            if not isinstance(v, str) or len(v) <= MAX_CHARS]
    return frozenset(kept[:MAX_VALUES])


def strings(values: Values) -> list[str]:
    return sorted(v for v in values if isinstance(v, str))


class Folder:
    """Folds expressions of one template; ``{% set %}``, namespaces and ``for`` over constants flow in."""

    def __init__(self, tree: nodes.Template) -> None:
        self.env: dict[str, Values] = {}
        self.steps = 0
        self._bindings = list(tree.find_all((nodes.Assign, nodes.For)))  # document order, walked once
        self._memo: dict[int, Values] | None = None  # only once bindings are settled
        for _ in range(LOOP_ROUNDS):
            before = dict(self.env)
            self._bind()
            if self.env == before:
                break
        self._memo = {}

    @property
    def exhausted(self) -> bool:
        """Folding stopped at MAX_STEPS: what the template builds is unknown (callers fail closed)."""
        return self.steps > MAX_STEPS

    def fold(self, node: nodes.Node) -> Values:
        """Every constant value ``node`` may evaluate to (empty when unknown)."""
        if self.exhausted:
            return _NOTHING
        if self._memo is not None and id(node) in self._memo:
            return self._memo[id(node)]
        try:
            values = _bounded(self._fold(node))
        except (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError):
            values = _NOTHING
        if self._memo is not None:
            self._memo[id(node)] = values
        return values

    # ---- bindings -----------------------------------------------------------------------
    def _bind(self) -> None:
        for node in self._bindings:
            if isinstance(node, nodes.Assign):
                self._assign(node.target, node.node)
            elif isinstance(node, nodes.For):
                self._loop(node)

    def _assign(self, target: nodes.Node, value: nodes.Node) -> None:
        if isinstance(target, nodes.Name):
            self._add(target.name, self.fold(value))
            if isinstance(value, nodes.Call) and getattr(value.node, "name", None) == "namespace":
                for kw in value.kwargs:  # namespace(a='x') seeds ns.a
                    self._add(f"{target.name}.{kw.key}", self.fold(kw.value))
        elif isinstance(target, nodes.NSRef):
            self._add(f"{target.name}.{target.attr}", self.fold(value))

    def _loop(self, node: nodes.For) -> None:
        if isinstance(node.target, nodes.Name) and isinstance(node.iter, nodes.List | nodes.Tuple):
            for item in node.iter.items:
                self._add(node.target.name, self.fold(item))
        elif isinstance(node.target, nodes.Name):
            for text in strings(self.fold(node.iter)):  # `for c in '__class__'` walks characters
                self._add(node.target.name, frozenset(text))

    def _add(self, name: str, values: Values) -> None:
        if values:
            self.env[name] = _bounded(self.env.get(name, _NOTHING) | values)

    # ---- expressions --------------------------------------------------------------------
    def _fold(self, node: nodes.Node) -> Iterable[Value]:
        if isinstance(node, nodes.Const):
            return [node.value] if isinstance(node.value, Value) else []
        if isinstance(node, nodes.Name):
            return self.env.get(node.name, _NOTHING)
        if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name):
            return self.env.get(f"{node.node.name}.{node.attr}", _NOTHING)
        if isinstance(node, nodes.Concat):
            return self._product([self.fold(n) for n in node.nodes], lambda *p: "".join(map(str, p)))
        if isinstance(node, nodes.BinExpr):
            return self._binary(node)
        if isinstance(node, nodes.Filter):
            return self._filter(node)
        if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr):
            return self._method(node, node.node)
        if isinstance(node, nodes.Getitem):
            return self._item(node)
        if isinstance(node, nodes.Neg):
            return [-v for v in self.fold(node.node) if isinstance(v, int) and not isinstance(v, bool)]
        if isinstance(node, nodes.CondExpr):
            return self.fold(node.expr1) | (self.fold(node.expr2) if node.expr2 else _NOTHING)
        return []

    def _product(self, parts: list[Values], combine: Callable[..., Value]) -> Iterable[Value]:
        if any(not p for p in parts):
            return []
        self.steps += min(MAX_VALUES * 4, _size(parts))
        return (combine(*combo) for combo in itertools.islice(itertools.product(*parts), MAX_VALUES * 4))

    def _binary(self, node: nodes.BinExpr) -> Iterable[Value]:
        ops: dict[type[nodes.BinExpr], Callable[[Value, Value], Value]] = {
            nodes.Add: _add, nodes.Mul: _mul, nodes.Mod: _percent,
        }
        op = ops.get(type(node))
        if op is None:
            return []
        right = self._sequence(node.right) if isinstance(node, nodes.Mod) else self.fold(node.right)
        return self._product([self.fold(node.left), right], op)

    def _sequence(self, node: nodes.Node) -> Values:
        """A ``%`` right side: a tuple of constants stays one tuple-shaped value, joined by \0."""
        if isinstance(node, nodes.Tuple | nodes.List):
            parts = [self.fold(item) for item in node.items]
            return frozenset(self._product(parts, lambda *p: _packed(p)))
        return self.fold(node)

    def _filter(self, node: nodes.Filter) -> Iterable[Value]:
        if node.node is None:
            return []
        if node.name == "join":
            return self._join(node.node, node.args[0] if node.args else None)
        subject = self.fold(node.node)
        if node.name in _STRING_FILTERS:
            return (_STRING_FILTERS[node.name](str(v)) for v in subject)
        args = [self.fold(a) for a in node.args]
        if node.name == "replace" and len(args) >= 2:
            return self._product([subject, *args[:2]], lambda s, a, b: str(s).replace(str(a), str(b)))
        if node.name == "format":
            return self._product([subject, *args], lambda s, *a: _percent(s, _packed(a)))
        return []

    def _join(self, items: nodes.Node, separator: nodes.Node | None) -> Iterable[Value]:
        seps = self.fold(separator) if separator is not None else frozenset({""})
        if isinstance(items, nodes.List | nodes.Tuple):
            parts = [self.fold(i) for i in items.items]
            return self._product([seps, *parts], lambda sep, *p: str(sep).join(map(str, p)))
        return self._product([seps, self.fold(items)], lambda sep, s: str(sep).join(str(s)))

    def _method(self, call: nodes.Call, func: nodes.Getattr) -> Iterable[Value]:
        if func.attr not in _STRING_METHODS:
            return []
        if func.attr == "join" and call.args:
            return self._join(call.args[0], func.node)
        subject = self.fold(func.node)
        args = [self.fold(a) for a in call.args]
        if func.attr == "format":
            return self._product([subject, *args], lambda s, *a: _str_format(str(s), a))
        method = func.attr
        return self._product([subject, *args], lambda s, *a: getattr(str(s), method)(*map(str, a)))

    def _item(self, node: nodes.Getitem) -> Iterable[Value]:
        subject = strings(self.fold(node.node))
        arg = node.arg
        if isinstance(arg, nodes.Slice):
            bounds = [self._int(p) for p in (arg.start, arg.stop, arg.step)]
            return [s[slice(*bounds)] for s in subject]
        return self._product([frozenset(subject), self.fold(arg)], lambda s, i: str(s)[int(i)])

    def _int(self, node: nodes.Node | None) -> int | None:
        if node is None:
            return None
        values = [v for v in self.fold(node) if isinstance(v, int)]
        if len(values) != 1:
            raise ValueError("slice bound is not one constant")
        return values[0]


def _size(parts: list[Values]) -> int:
    total = 1
    for part in parts:
        total *= len(part)
    return total


def _add(left: Value, right: Value) -> Value:
    if isinstance(left, str) != isinstance(right, str):
        raise TypeError("str + number")
    return left + right  # type: ignore[operator]


def _mul(left: Value, right: Value) -> Value:
    text, count = (left, right) if isinstance(left, str) else (right, left)
    if not isinstance(text, str) or not isinstance(count, int) or len(text) * max(count, 0) > MAX_CHARS:
        raise ValueError("not a bounded string repeat")
    return text * count


_PACK = "\0"  # joins a tuple's parts inside one folded value; never in template text that matters


def _packed(parts: tuple[Value, ...]) -> str:
    return _PACK + _PACK.join(f"{type(p).__name__}:{p}" for p in parts)


def _unpacked(value: Value) -> tuple[Value, ...]:
    if not (isinstance(value, str) and value.startswith(_PACK)):
        return (value,)
    out: list[Value] = []
    for part in value[1:].split(_PACK):
        kind, _, text = part.partition(":")
        out.append(int(text) if kind == "int" else text)
    return tuple(out)


def _percent(fmt: Value, args: Value) -> Value:
    if not isinstance(fmt, str):
        raise TypeError("% of a number")
    result = fmt % _unpacked(args)  # str/int only: Python's % cannot reach attributes
    if len(result) > MAX_CHARS:
        raise ValueError("too long")
    return result


def _str_format(fmt: str, args: tuple[Value, ...]) -> str:
    # Only plain positional/auto fields: `{0.__class__}` would walk attributes, so it is not folded.
    fields = [f for _, f, _, _ in string.Formatter().parse(fmt) if f is not None]
    if any(f and not f.isdigit() for f in fields):
        raise ValueError("format field with attribute or key access")
    return fmt.format(*args)
