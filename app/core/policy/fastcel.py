"""A fast path for the plain CEL that policies use, over plain Python values; celpy stays the judge.

celpy interprets the parse tree node by node and evaluates both sides of `||` and `&&`: a rule
like `findings.exists(f, ...)` costs ~0.5 ms per finding. This module turns the same Lark tree
into Python closures once, for a small subset (logic, comparisons, `in`, `+`, member access,
`size`, `has`, `startsWith`/`endsWith`/`contains`, the `exists`/`all` macros, plain literals).
It only answers when it is sure: anything outside the subset fails to compile (celpy alone
runs the rule), and any value it is unsure about at run time (a missing key, mixed types, a
non-bool condition, an overflow) raises `Unsure`, and celpy evaluates the rule from scratch.
So a result differs from celpy's only if the subset itself is wrong, which tests compare.
Not replaced by a compiled CEL library: common-expression-language 0.10.0 makes mixed-type
comparisons `false` instead of an error (fail open) and converts the facts at every decision
(docs/benchmarks.md §27, bench/cel_library.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Scope = Mapping[str, Any]
FastFn = Callable[[Scope], Any]
_INT64 = (-(2**63), 2**63 - 1)
_PASS_THROUGH = frozenset({"expr", "conditionalor", "conditionaland", "relation", "addition",
                           "multiplication", "unary", "member", "primary", "paren_expr"})
_PLAIN_STRING = re.compile(r"""^(?:"[^"\\\n]*"|'[^'\\\n]*')$""")
_DECIMAL = re.compile(r"^-?[0-9]+$")


class Unsure(Exception):  # a signal, not a failure: celpy takes over
    """The fast path cannot vouch for this value: let celpy evaluate the rule."""


class Unsupported(Exception):  # raised while compiling only
    """The expression uses CEL outside the fast subset."""


def fast_program(tree: Any) -> FastFn | None:
    """Closures for a celpy (Lark) parse tree, or None when it is outside the subset."""
    try:
        return _node(tree)
    except Unsupported:
        return None


def _node(tree: Any) -> FastFn:
    data = getattr(tree, "data", None)
    children: list[Any] = list(getattr(tree, "children", []))
    if data in _PASS_THROUGH and len(children) == 1:
        return _node(children[0])
    builder = _BUILDERS.get(f"{data}/{len(children)}") or _BUILDERS.get(str(data))
    if builder is None:
        raise Unsupported(str(data))
    return builder(children)


# ---- logic --------------------------------------------------------------------------------


def _boolean(value: Any) -> bool:
    if type(value) is not bool:
        raise Unsure
    return value


def _or(children: list[Any]) -> FastFn:
    left, right = _node(children[0]), _node(children[1])
    return lambda s: _boolean(left(s)) or _boolean(right(s))


def _and(children: list[Any]) -> FastFn:
    left, right = _node(children[0]), _node(children[1])
    return lambda s: _boolean(left(s)) and _boolean(right(s))


def _ternary(children: list[Any]) -> FastFn:
    test, yes, no = (_node(c) for c in children)
    return lambda s: yes(s) if _boolean(test(s)) else no(s)


def _unary(children: list[Any]) -> FastFn:
    operand = _node(children[1])
    if children[0].data == "unary_not":
        return lambda s: not _boolean(operand(s))
    if children[0].data == "unary_neg":
        return lambda s: _checked(-_int(operand(s)))
    raise Unsupported(children[0].data)


# ---- comparisons --------------------------------------------------------------------------


def _scalar_kind(value: Any) -> type:
    kind = type(value)
    if kind not in (str, int, bool, type(None)):
        raise Unsure
    return kind


def _equal(a: Any, b: Any) -> bool:
    if type(a) is str and type(b) is str:  # the common case first
        return a == b
    kind_a, kind_b = _scalar_kind(a), _scalar_kind(b)
    if kind_a is kind_b:
        return bool(a == b)
    if {kind_a, kind_b} == {str, type(None)}:
        return False  # celpy: a string is never null; other mixes are errors or quirks
    raise Unsure


def _ordered(a: Any, b: Any) -> tuple[Any, Any]:
    kind = type(a)
    if kind is not type(b) or kind not in (int, str):
        raise Unsure
    return a, b


def _contains(needle: Any, haystack: Any) -> bool:
    if type(haystack) is list:
        if type(needle) is str and (needle in haystack or all(type(item) is str for item in haystack)):
            return needle in haystack  # the common case at C speed: a string among strings
        return any(_equal(needle, item) for item in haystack)
    if type(haystack) is dict and type(needle) is str and all(type(k) is str for k in haystack):
        return needle in haystack
    raise Unsure


_RELATIONS: dict[str, Callable[[Any, Any], bool]] = {
    "relation_eq": _equal,
    "relation_ne": lambda a, b: not _equal(a, b),
    "relation_lt": lambda a, b: _lt(*_ordered(a, b)),
    "relation_le": lambda a, b: _lt(*_ordered(a, b)) or a == b,
    "relation_gt": lambda a, b: _lt(*_ordered(b, a)),
    "relation_ge": lambda a, b: _lt(*_ordered(b, a)) or a == b,
    "relation_in": _contains,
}


def _lt(a: Any, b: Any) -> bool:
    return bool(a < b)


def _relation(children: list[Any]) -> FastFn:
    operator = _RELATIONS.get(children[0].data)
    if operator is None:
        raise Unsupported(children[0].data)
    left, right = _node(children[0].children[0]), _node(children[1])
    return lambda s: operator(left(s), right(s))


# ---- arithmetic ---------------------------------------------------------------------------


def _int(value: Any) -> int:
    if type(value) is not int:
        raise Unsure
    return value


def _checked(value: int) -> int:
    if not _INT64[0] <= value <= _INT64[1]:
        raise Unsure  # celpy reports the overflow
    return value


def _plus(a: Any, b: Any) -> Any:
    kind = type(a)
    if kind is not type(b) or kind not in (int, str, list):
        raise Unsure
    return _checked(a + b) if kind is int else a + b


def _addition(children: list[Any]) -> FastFn:
    op, right = children[0].data, _node(children[1])
    left = _node(children[0].children[0])
    if op == "addition_add":
        return lambda s: _plus(left(s), right(s))
    if op == "addition_sub":
        return lambda s: _checked(_int(left(s)) - _int(right(s)))
    raise Unsupported(op)


def _multiplication(children: list[Any]) -> FastFn:
    if children[0].data != "multiplication_mul":
        raise Unsupported(children[0].data)  # `/` and `%` have error cases: celpy's
    left, right = _node(children[0].children[0]), _node(children[1])
    return lambda s: _checked(_int(left(s)) * _int(right(s)))


# ---- names, members, literals -------------------------------------------------------------


def _ident(children: list[Any]) -> FastFn:
    name = str(children[0])

    def lookup(scope: Scope) -> Any:
        if name not in scope:
            raise Unsure  # celpy names the undeclared reference
        return scope[name]

    return lookup


def _field(value: Any, name: str) -> Any:
    if type(value) is not dict or name not in value:
        raise Unsure
    return value[name]


def _member_dot(children: list[Any]) -> FastFn:
    target, name = _node(children[0]), str(children[1])
    return lambda s: _field(target(s), name)


def _index(value: Any, key: Any) -> Any:
    if type(value) is list and type(key) is int and 0 <= key < len(value):
        return value[key]
    if type(value) is dict and type(key) is str and key in value:
        return value[key]
    raise Unsure


def _member_index(children: list[Any]) -> FastFn:
    target, key = _node(children[0]), _node(children[1])
    return lambda s: _index(target(s), key(s))


def _literal(children: list[Any]) -> FastFn:
    token = children[0]
    text, kind = str(token), token.type
    value: Any
    if kind == "INT_LIT" and _DECIMAL.match(text):
        value = _checked(int(text))
    elif kind == "STRING_LIT" and _PLAIN_STRING.match(text):
        value = text[1:-1]
    elif kind == "BOOL_LIT":
        value = text == "true"
    elif kind == "NULL_LIT":
        value = None
    else:
        raise Unsupported(kind)  # floats, escapes, raw and byte strings: celpy's
    return lambda _s: value


def _exprlist(tree: Any) -> list[FastFn]:
    return [_node(c) for c in tree.children]


def _list_lit(children: list[Any]) -> FastFn:
    items = _exprlist(children[0]) if children else []
    return lambda s: [item(s) for item in items]


def _size(value: Any) -> int:
    if type(value) not in (str, list, dict):
        raise Unsure
    return len(value)


def _ident_arg(children: list[Any]) -> FastFn:
    name, args = str(children[0]), children[1].children if len(children) > 1 else []
    if name == "size" and len(args) == 1:
        operand = _node(args[0])
        return lambda s: _size(operand(s))
    if name == "has" and len(args) == 1:
        return _has(args[0])
    raise Unsupported(name)


def _has(arg: Any) -> FastFn:
    """`has(x.f)`: the field is present (the argument must be a field selection)."""
    while getattr(arg, "data", None) in _PASS_THROUGH and len(arg.children) == 1:
        arg = arg.children[0]
    if getattr(arg, "data", None) != "member_dot":
        raise Unsupported("has")
    target, name = _node(arg.children[0]), str(arg.children[1])

    def present(scope: Scope) -> bool:
        value = target(scope)
        if type(value) is not dict:
            raise Unsure
        return name in value

    return present


# ---- methods and macros -------------------------------------------------------------------

_STRING_METHODS: dict[str, Callable[[str, str], bool]] = {
    "startsWith": str.startswith,
    "endsWith": str.endswith,
    "contains": str.__contains__,
}


def _member_dot_arg(children: list[Any]) -> FastFn:
    target, name = _node(children[0]), str(children[1])
    args = children[2].children if len(children) > 2 else []
    if name in ("exists", "all") and len(args) == 2:
        return _macro(target, _bound_name(args[0]), _node(args[1]), name == "exists")
    if name in _STRING_METHODS and len(args) == 1:
        return _string_method(target, _STRING_METHODS[name], _node(args[0]))
    if name == "size" and not args:
        return lambda s: _size(target(s))
    raise Unsupported(name)


def _string_method(target: FastFn, method: Callable[[str, str], bool], arg: FastFn) -> FastFn:
    def call(scope: Scope) -> bool:
        value, operand = target(scope), arg(scope)
        if type(value) is not str or type(operand) is not str:
            raise Unsure
        return method(value, operand)

    return call


def _bound_name(tree: Any) -> str:
    while getattr(tree, "data", None) in _PASS_THROUGH and len(tree.children) == 1:
        tree = tree.children[0]
    if getattr(tree, "data", None) != "ident":
        raise Unsupported("macro variable")
    return str(tree.children[0])


def _macro(target: FastFn, name: str, predicate: FastFn, exists: bool) -> FastFn:
    """`exists` stops at the first true element, `all` at the first false one (as CEL allows:
    an error elsewhere is absorbed by that result); any other doubt is celpy's to settle."""

    def run(scope: Scope) -> bool:
        items = target(scope)
        if type(items) is not list:
            raise Unsure  # maps iterate keys in CEL: rare in policies, left to celpy
        inner = dict(scope)
        for item in items:
            inner[name] = item
            if _boolean(predicate(inner)) is exists:
                return exists
        return not exists

    return run


_BUILDERS: dict[str, Callable[[list[Any]], FastFn]] = {
    "conditionalor/2": _or,
    "conditionaland/2": _and,
    "expr/3": _ternary,
    "unary/2": _unary,
    "relation/2": _relation,
    "addition/2": _addition,
    "multiplication/2": _multiplication,
    "ident": _ident,
    "member_dot": _member_dot,
    "member_dot_arg": _member_dot_arg,
    "member_index": _member_index,
    "literal": _literal,
    "list_lit": _list_lit,
    "ident_arg": _ident_arg,
}
