"""The symbolic values of the pickle machine: just enough structure to resolve imports
and to recognise call targets, object state and container contents. Everything else is
``OPAQUE``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_KEPT_ITEMS = 64  # dict entries kept per dict (enough for object state records)
MAX_DESCRIBED_CALLS = 3  # evidence spells out this many nested calls; deeper chains share one text


class Opaque:
    """A value the analysis does not model (numbers in bulk, sets, persistent ids...)."""


OPAQUE = Opaque()


@dataclass(eq=False)
class Const:
    value: object


@dataclass(eq=False)
class GlobalRef:
    module: str
    name: str

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.name}"


@dataclass(eq=False)
class Call:
    func: Value
    args: Value
    state: Value | None = None
    # How many calls deep this result is, and the callable at the bottom: kept at build time
    # so evidence for a chain thousands deep costs O(1), not a walk (or recursion) per call.
    depth: int = field(init=False)
    root: Value = field(init=False)

    def __post_init__(self) -> None:
        inner = self.func
        self.depth = inner.depth + 1 if isinstance(inner, Call) else 1
        self.root = inner.root if isinstance(inner, Call) else inner


@dataclass(eq=False)
class TupleVal:
    items: tuple[Value, ...]


@dataclass(eq=False)
class ListVal:
    pass


@dataclass(eq=False)
class DictVal:
    items: dict[str, Value] = field(default_factory=dict)

    def put(self, key: Value, value: Value) -> None:
        if isinstance(key, Const) and isinstance(key.value, str) and len(self.items) < MAX_KEPT_ITEMS:
            self.items[key.value] = value


Value = Opaque | Const | GlobalRef | Call | TupleVal | ListVal | DictVal


def describe(value: Value) -> str:
    """Short text for evidence: what kind of value an operand was (at most ~120 characters).

    Call chains deeper than ``MAX_DESCRIBED_CALLS`` all read the same, so a chain thousands
    deep yields a handful of distinct findings, not one per level.
    """
    if not isinstance(value, Call):
        return _describe_leaf(value)
    if value.depth > MAX_DESCRIBED_CALLS:
        return f"result of more than {MAX_DESCRIBED_CALLS} nested calls of {_describe_leaf(value.root)}"
    return "result of calling " * value.depth + _describe_leaf(value.root)


def _describe_leaf(value: Value) -> str:
    if isinstance(value, Const):
        return f"{type(value.value).__name__} {value.value!r:.40}"
    if isinstance(value, GlobalRef):
        return f"global {value.dotted}"
    return type(value).__name__.lower()
