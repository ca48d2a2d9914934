"""Library allowlist packs: ``data/library_allowlist.json`` (docs/detection.md, "Library allowlist packs").

``scripts/derive_allowlist.py`` writes it from library source (gensim, scikit-learn, scipy, numpy),
parsed, never imported: every class whose load-time methods only restore state, with the uses a
load may make of it, plus hand-picked entries (C code the parse cannot see), each with its reason.

A use is what an unpickler does with the global; an entry is safe only for the uses it lists:

- ``new``: instantiated without ``__init__`` (NEWOBJ, ``copyreg.__newobj__``/``_reconstructor``,
  numpy's ``_reconstruct``): its ``__new__`` (and ``__array_finalize__``) run;
- ``call``: called (REDUCE, INST, OBJ, or later by whoever holds it): ``__new__`` and ``__init__``,
  or a function's body;
- ``build``: BUILD on an instance (or, for a function, on what it returns): ``__setstate__``,
  ``__setattr__``, ``__getattr__``;
- ``items``: SETITEM(S)/APPEND(S)/ADDITEMS: ``__setitem__``, ``append``, ``extend``, ``add``;
- ``value``: held as a value (an argument or state) and never called by the stream itself.

Hand-picked entries may carry an argument rule (numpy's random-state constructors call their
second argument and instantiate a class named by their first) checked on every call.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from app.core.scanners.pickle_engine.values import Call, Const, DictVal, GlobalRef, TupleVal, Value

DATA_FILE = Path(__file__).parents[1] / "data" / "library_allowlist.json"
USES = ("new", "call", "build", "items", "value")

# numpy/random/_pickle.py: the bit generators ``__bit_generator_ctor`` may build, by name or class.
BIT_GENERATOR_NAMES = frozenset({"MT19937", "PCG64", "PCG64DXSM", "Philox", "SFC64"})
BIT_GENERATOR_CLASSES = frozenset({
    "numpy.random._mt19937.MT19937", "numpy.random._pcg64.PCG64", "numpy.random._pcg64.PCG64DXSM",
    "numpy.random._philox.Philox", "numpy.random._sfc64.SFC64",
})
BIT_GENERATOR_CTOR = "numpy.random._pickle.__bit_generator_ctor"
SEED_SEQUENCE = "numpy.random.bit_generator.SeedSequence"


@dataclass(frozen=True)
class PackEntry:
    name: str
    library: str
    uses: frozenset[str]
    reason: str
    rule: str = ""  # an argument rule (hand-picked entries), checked by ``argument_problem``
    overrides_module: bool = False  # hand-picked: beats a whole-module denial (``builtins.hash``)
    derived: bool = False  # vouched by the source derivation: BUILD state must be a plain dict


    def allows(self, use: str) -> bool:
        return use in self.uses


@functools.cache
def entries() -> dict[str, PackEntry]:
    """dotted name -> entry; the file is parsed once, on the first lookup."""
    # A missing or broken file raises: an allowlist silently lost would turn into unknown imports,
    # but a half-read one could not be trusted either.
    data = json.loads(DATA_FILE.read_bytes())
    found: dict[str, PackEntry] = {}
    for library, section in data["derived"].items():
        for name, (uses, reason) in section.items():
            found[name] = PackEntry(name, library, _uses(uses), reason, derived=True)
    for name, item in data["hand_picked"].items():
        found[name] = PackEntry(name, item["library"], _uses(item["uses"]), item["why"], item.get("rule", ""),
                                bool(item.get("overrides_module", False)))
    return found


def _uses(text: str) -> frozenset[str]:
    uses = frozenset(text.split())
    unknown = uses - set(USES)
    if unknown:
        raise ValueError(f"library_allowlist.json: unknown uses {sorted(unknown)}")
    return uses


def lookup(dotted: str) -> PackEntry | None:
    return entries().get(dotted)


def module_override(dotted: str) -> PackEntry | None:
    """A reviewed entry that wins over a whole-module denial (never over a derived dangerous callable)."""
    entry = entries().get(dotted)
    return entry if entry is not None and entry.overrides_module else None


def checked_per_use(dotted: str) -> PackEntry | None:
    """A reviewed entry whose every use the engine checks (its argument or state rule, or a builtin
    allowed only as a value): a peer's denylist hit on its import alone is explained by that check."""
    entry = entries().get(dotted)
    return entry if entry is not None and (entry.rule or entry.overrides_module) else None


def allows(dotted: str, use: str) -> bool:
    """Whether a use of ``dotted`` is vouched for: True for globals no pack restricts."""
    entry = entries().get(dotted)
    return entry is None or entry.allows(use)


def state_callers(dotted: str) -> tuple[int, ...]:
    """Positions in the BUILD state tuple that the object calls later (``functools.partial``'s func)."""
    entry = entries().get(dotted)
    return (0,) if entry is not None and entry.rule == "partial-state" else ()


def state_problem(dotted: str, state: Value) -> str | None:
    """A derived entry's load-time methods were judged on a state dict (``state.pop(...)``): an
    object there would run its own methods of those names."""
    entry = entries().get(dotted)
    if entry is None or not entry.derived or _plain_state(state):
        return None
    return "its BUILD state is not a plain dict (or a pair of dicts), which is all its pack vouches for"


def _plain_state(state: Value) -> bool:
    if isinstance(state, DictVal):
        return True
    return (isinstance(state, TupleVal) and len(state.items) == 2
            and all(isinstance(i, DictVal) or (isinstance(i, Const) and i.value is None) for i in state.items))


def argument_problem(dotted: str, args: Value) -> str | None:
    """What is wrong with the arguments of a call of an entry that has an argument rule, or None."""
    entry = entries().get(dotted)
    if entry is None or not entry.rule:
        return None
    check = _RULES.get(entry.rule)
    return None if check is None else check(args)


def _items(args: Value) -> tuple[Value, ...] | None:
    return args.items if isinstance(args, TupleVal) else None


def _no_arguments(args: Value) -> str | None:
    # numpy.random.__RandomState_ctor() takes none: anything else fails, or is not numpy's pickle
    items = _items(args)
    return None if items == () else "takes no arguments"


def _bit_generator(value: Value) -> bool:
    """A bit generator name, class, or an instance made by numpy's own constructor."""
    if isinstance(value, Const):
        return isinstance(value.value, str) and value.value in BIT_GENERATOR_NAMES
    if isinstance(value, GlobalRef):
        return value.dotted in BIT_GENERATOR_CLASSES
    if isinstance(value, Call) and isinstance(value.func, GlobalRef):
        return value.func.dotted in BIT_GENERATOR_CLASSES or value.func.dotted == BIT_GENERATOR_CTOR
    return False


def _bit_generator_ctor_args(args: Value) -> str | None:
    # __bit_generator_ctor(bit_generator='MT19937'): a class is instantiated as given, a name is
    # looked up in numpy's own table; anything else would be a class of the attacker's choosing.
    items = _items(args)
    if items is None or len(items) > 1:
        return "takes one bit generator name or class"
    if items and not _bit_generator(items[0]):
        return "argument 0 is not one of numpy's bit generators (MT19937, PCG64, PCG64DXSM, Philox, SFC64)"
    return None


def _state_ctor_args(args: Value) -> str | None:
    # __randomstate_ctor / __generator_ctor(bit_generator_name, bit_generator_ctor): the second
    # argument is called with the first, so it must be numpy's own __bit_generator_ctor.
    items = _items(args)
    if items is None or len(items) > 2:
        return "takes a bit generator and numpy's bit generator constructor"
    if items and not _bit_generator(items[0]):
        return "argument 0 is not one of numpy's bit generators (MT19937, PCG64, PCG64DXSM, Philox, SFC64)"
    if len(items) == 2 and not (isinstance(items[1], GlobalRef) and items[1].dotted == BIT_GENERATOR_CTOR):
        return f"argument 1 is called with argument 0 and is not {BIT_GENERATOR_CTOR}"
    return None


def _seed_sequence_args(args: Value) -> str | None:
    # Cython's __pyx_unpickle_SeedSequence(type, checksum, state): type.__new__(type), then the state.
    items = _items(args)
    if items is None or not items or not (isinstance(items[0], GlobalRef) and items[0].dotted == SEED_SEQUENCE):
        return f"argument 0 is instantiated and is not {SEED_SEQUENCE}"
    return None


def _partial_state(args: Value) -> str | None:
    return None  # functools.partial(func, ...): func is checked as a called argument (catalog.ARGUMENT_CALLERS)


_RULES = {
    "no-arguments": _no_arguments,
    "bit-generator-ctor": _bit_generator_ctor_args,
    "random-state-ctor": _state_ctor_args,
    "seed-sequence": _seed_sequence_args,
    "partial-state": _partial_state,
}
