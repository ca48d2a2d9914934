"""The symbolic values of the pickle machine: just enough structure to resolve imports
and to recognise call targets, object state and container contents. Everything else is
``OPAQUE``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_KEPT_ITEMS = 64  # dict entries kept per dict (enough for object state records)


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
    """Short text for evidence: what kind of value an operand was."""
    if isinstance(value, Const):
        return f"{type(value.value).__name__} {value.value!r:.40}"
    if isinstance(value, GlobalRef):
        return f"global {value.dotted}"
    if isinstance(value, Call):
        return f"result of calling {describe(value.func)}"
    return type(value).__name__.lower()
