"""Misspelt fields in `when` expressions (`repo.teir`, `f.severty`), found when a policy loads.

A field that is not there is an error at evaluation (the rule fails closed on every vet), and
`has()` of it is always false: either way a typo, never what the author meant. The field names
come from the variables themselves (a probe activation built by build_activation, one element in
every list), so a field added there is known here at once. Only maps whose keys are fixed are
checked: `repo.facts` (hub metadata) is open, and a value the walk cannot follow (a `map()`
result, an index by a variable) is not judged.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from app.core.closure import CLOSURE_RULE, ClosureItem, Gate, Kind
from app.core.findings import Severity
from app.core.policy.activation import build_activation
from app.core.policy.cel import compile_cel
from app.core.policy.facts import FileFact, FindingFact, PolicyFacts
from app.core.repo_refs import REFERENCE_RULE, RepoReference

_OPEN_MAPS = frozenset({("repo", "facts")})  # keys are the hub's, not hfvet's
_MACROS = frozenset({"all", "exists", "exists_one", "filter", "map"})
_PASS_THROUGH = frozenset({"expr", "conditionalor", "conditionaland", "relation", "addition",
                           "multiplication", "unary", "member", "primary", "paren_expr"})


@dataclass(frozen=True)
class Shape:
    """What the walk knows of a value: the fields of a map with fixed keys, or the shape of a list's items."""

    fields: dict[str, Shape] | None = None  # a map with exactly these keys
    item: Shape | None = None  # a list of such items


OPEN = Shape()  # anything: nothing is checked below it


@dataclass(frozen=True)
class UnknownField:
    field: str
    owner: str  # the expression it was read from, e.g. `repo` or `f`
    known: tuple[str, ...]

    def message(self) -> str:
        close = difflib.get_close_matches(self.field, self.known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        fields = ", ".join(self.known) or "no fields"
        return f"unknown field {self.field!r} of {self.owner}{hint}; it has: {fields}"


@lru_cache(maxsize=1024)
def unknown_fields(expr: str, list_names: tuple[str, ...]) -> tuple[UnknownField, ...]:
    """Every read in ``expr`` of a field that its map cannot have, in expression order.

    Cached: a policy loads again on every change of the active policy, and a server's replicas
    load it on start; only the names of the policy's `lists` change the answer.
    """
    found: list[UnknownField] = []
    _walk(compile_cel(expr).tree, dict(variable_shapes(list_names)), found)
    return tuple(found)


@lru_cache(maxsize=16)
def variable_shapes(list_names: tuple[str, ...]) -> tuple[tuple[str, Shape], ...]:
    """The shape of every top-level variable, from a probe with one item in every list."""
    probe = _probe_facts()
    lists: dict[str, list[str]] = {name: [] for name in list_names}
    activation = build_activation(probe, list(probe.findings), list(probe.findings), ("third-party", None), lists)
    return tuple((name, _shape(value, (name,))) for name, value in activation.plain.items())


def _probe_facts() -> PolicyFacts:
    closure = ClosureItem(surface="probe", runtime="probe", kind=Kind.CODE, gate=Gate.ALWAYS, path="probe.py",
                          target="probe.py")
    reference = RepoReference(repo="probe/probe", revision=None, path="config.json", via="probe")
    return PolicyFacts(
        files=[FileFact(path="probe.bin", size=1, scanned=False)],
        findings=[
            FindingFact(path="probe.bin", rule="probe", severity=Severity.MEDIUM),
            FindingFact(path=reference.path, rule=REFERENCE_RULE, severity=Severity.INFO,
                        evidence=reference.evidence()),
            FindingFact(path="probe.py", rule=CLOSURE_RULE, severity=Severity.INFO, evidence=closure.evidence()),
        ],
    )


def _shape(value: Any, path: tuple[str, ...]) -> Shape:
    if path in _OPEN_MAPS:
        return OPEN
    if isinstance(value, dict):
        return Shape(fields={key: _shape(item, (*path, key)) for key, item in value.items()})
    if isinstance(value, list) and value:
        return Shape(item=_shape(value[0], (*path, "[]")))
    return OPEN


def _walk(node: Any, scope: dict[str, Shape], found: list[UnknownField]) -> Shape:
    """The shape of ``node``'s value, noting every unknown field read on the way."""
    data = getattr(node, "data", None)
    children: list[Any] = list(getattr(node, "children", []))
    if data in _PASS_THROUGH and len(children) == 1:
        return _walk(children[0], scope, found)
    if data == "ident":
        return scope.get(str(children[0]), OPEN)
    if data == "member_dot":
        return _field(children[0], str(children[1]), scope, found)
    if data == "member_dot_arg":
        return _method(children, scope, found)
    if data == "member_index":
        target = _walk(children[0], scope, found)
        _walk(children[1], scope, found)
        return target.item or OPEN
    for child in children:
        _walk(child, scope, found)
    return OPEN


def _field(target: Any, name: str, scope: dict[str, Shape], found: list[UnknownField]) -> Shape:
    shape = _walk(target, scope, found)
    if shape.fields is None:
        return OPEN
    if name not in shape.fields:
        found.append(UnknownField(name, _text(target), tuple(sorted(shape.fields))))
        return OPEN
    return shape.fields[name]


def _method(children: list[Any], scope: dict[str, Shape], found: list[UnknownField]) -> Shape:
    """A macro binds its variable to the items of its target; other methods are only walked."""
    target = _walk(children[0], scope, found)
    name = str(children[1])
    args = list(children[2].children) if len(children) > 2 else []
    variable = _ident_name(args[0]) if args else None
    if name in _MACROS and variable is not None and len(args) >= 2:
        inner = {**scope, variable: target.item or OPEN}
        for arg in args[1:]:
            _walk(arg, inner, found)
        return target if name == "filter" else OPEN
    for arg in args:
        _walk(arg, scope, found)
    return OPEN


def _ident_name(node: Any) -> str | None:
    while getattr(node, "data", None) in _PASS_THROUGH and len(node.children) == 1:
        node = node.children[0]
    return str(node.children[0]) if getattr(node, "data", None) == "ident" else None


def _text(node: Any) -> str:
    """A field chain as written (`repo`, `f`, `files[...]`), or `the value` for anything else."""
    while getattr(node, "data", None) in _PASS_THROUGH and len(node.children) == 1:
        node = node.children[0]
    data = getattr(node, "data", None)
    if data == "ident":
        return str(node.children[0])
    if data == "member_dot":
        return f"{_text(node.children[0])}.{node.children[1]}"
    if data == "member_index":
        return f"{_text(node.children[0])}[...]"
    return "the value"
