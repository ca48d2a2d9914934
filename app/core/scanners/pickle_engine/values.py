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


class Persistent(Opaque):
    """What ``persistent_load`` returns (a torch storage): opaque, but known not to be a dict."""


PERSISTENT = Persistent()


@dataclass(eq=False, slots=True)
class Const:
    value: object
    computed: bool = False  # the result of a pure helper the analysis evaluated (an encoded name)


@dataclass(eq=False, slots=True)
class GlobalRef:
    module: str
    name: str

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.name}"


@dataclass(eq=False, slots=True, init=False)
class Call:
    func: Value
    args: Value
    state: Value | None
    opcode: str  # REDUCE/INST/OBJ run __init__; NEWOBJ(_EX) and copyreg only __new__
    # How many calls deep this result is, and the callable at the bottom: kept at build time
    # so evidence for a chain thousands deep costs O(1), not a walk (or recursion) per call.
    depth: int
    root: Value

    def __init__(self, func: Value, args: Value, state: Value | None = None, opcode: str = "") -> None:
        self.func, self.args, self.state, self.opcode = func, args, state, opcode
        if isinstance(func, Call):
            self.depth, self.root = func.depth + 1, func.root
        else:
            self.depth, self.root = 1, func


@dataclass(eq=False, slots=True)
class TupleVal:
    items: tuple[Value, ...]


@dataclass(eq=False, slots=True)
class ListVal:
    """A list, set or frozenset: the first ``MAX_KEPT_ITEMS`` members are kept for inspection."""

    items: list[Value] = field(default_factory=list)

    def add(self, values: list[Value]) -> None:
        room = MAX_KEPT_ITEMS - len(self.items)
        if room > 0:
            self.items.extend(values[:room])


@dataclass(eq=False, slots=True)
class DictVal:
    items: dict[str, Value] = field(default_factory=dict)
    # Keys that are not strings, and values under them: kept (bounded) so that arguments
    # hidden in a dict are still inspected.
    others: list[Value] = field(default_factory=list)

    def put(self, key: Value, value: Value) -> None:
        if len(self.items) + len(self.others) >= 2 * MAX_KEPT_ITEMS:
            return
        if isinstance(key, Const) and isinstance(key.value, str):
            self.items[key.value] = value
        else:
            self.others.extend((key, value))


def children(value: Value, through_calls: bool = False) -> list[Value]:
    """The modelled contents of a container; with ``through_calls``, also the arguments a
    call result was built from (``OrderedDict([("k", "curl ...")])`` carries its text on)."""
    if through_calls and isinstance(value, Call):
        return [value.args]
    if isinstance(value, (TupleVal, ListVal)):
        return list(value.items)
    if isinstance(value, DictVal):
        return [*(Const(k) for k in value.items), *value.items.values(), *value.others]
    return []


def leaves(value: Value, max_depth: int = 4, budget: int = 4096, through_calls: bool = False) -> list[Value]:
    """Non-container values inside ``value`` (itself included), breadth-first and bounded."""
    found: list[Value] = []
    level = [value]
    for _ in range(max_depth + 1):
        nested: list[Value] = []
        for item in level:
            inner = children(item, through_calls)
            if inner or isinstance(item, (TupleVal, ListVal, DictVal)):
                nested.extend(inner)
            else:
                found.append(item)
            if len(found) + len(nested) > budget:
                return found
        level = nested
    return found


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
