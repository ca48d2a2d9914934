"""Derive hfvet's library allowlist packs from library source (issue 22, item 4).

A pickle of a library object names its class (or a constructor function) and the loader runs
that class's load-time methods. A class is vouched for a use only when every method that use
runs only restores state. The uses (app/core/scanners/pickle_engine/library_packs.py):

- ``new`` (NEWOBJ, copyreg, numpy ``_reconstruct``): ``__new__``, ``__array_finalize__``;
- ``call`` (REDUCE/INST/OBJ, or a later call by whoever holds it): ``new`` plus ``__init__``;
- ``build`` (BUILD): ``__setstate__``, ``__setattr__``, ``__getattr__``, ``__getattribute__``
  (the unpickler's ``getattr(inst, "__setstate__")`` reaches the last two);
- ``items`` (SETITEM(S)/APPEND(S)/ADDITEMS): ``__setitem__``, ``append``, ``extend``, ``add``.

Every class is also refused outright when its ``__del__`` (run when the object is collected) or
one of its own methods named like a container method (``pop``, ``update``...: the names a safe
body may call on a state value) is not safe.

How a method is judged safe (parsed with ``ast``, never imported; resolution reuses
``derive_denylist.py``'s module parser and call resolution): every call in its body must be
- a method or function of the parsed sources that is itself safe (recursively, at most
  ``MAX_DEPTH`` calls deep), a class of them whose ``__new__``/``__init__`` are safe;
- ``super().m(...)``/``Base.m(self, ...)`` reaching ``object``'s or a builtin container's own C
  method (``__setstate__``, ``__init__``, ``update``...);
- a builtin from ``PURE_BUILTINS`` (``isinstance``, ``len``, ``dict``...), ``getattr``/``hasattr``/
  ``setattr`` with a constant name, a logging call, ``warnings.warn``;
- a container or string method (``DATA_METHODS``) called on a local value or ``self.__dict__``.
Anything else (an attribute of ``self`` called as a function, a numpy or C call, a callable from
state, a call of a call) is "not proven" and the use is refused. Calls that resolve to an entry
of the derived denylist (data/dangerous_callables.json) are named with its sink. Reading
``self.x`` where the class defines ``x`` (a property) checks that body too. A base class outside
the parsed sources refuses the class, unless it is one of ``SAFE_EXTERNAL_BASES``.

Output: app/core/scanners/data/library_allowlist.json, one entry per line: for each derived
entry the uses it is vouched for and the reasons (which methods ran, which call refused a use).
Module-level aliases and imports that resolve to a vouched class are entries too (old pickles
name ``gensim.models.keyedvectors.Word2VecKeyedVectors``, an alias of ``KeyedVectors`` today).
A name that the catalog already calls dangerous is never written. ``HAND_PICKED`` holds what the
parse cannot see (numpy's Cython random-state constructors, ``functools.partial``, builtins held
as values), each with its uses, its argument rule and why.

Regenerate (wheels from ``pip download --no-deps``, unzipped; never installed):
    python scripts/derive_allowlist.py --source gensim=DIR@4.3.3 --source sklearn=DIR@1.5.2 \\
        --source scipy=DIR@1.14.1 --source numpy=DIR@2.4.6 --pack gensim --pack sklearn \\
        --pack scipy.sparse --function 'gensim.models.tfidfmodel.smartirs_*'
Review:  python scripts/derive_allowlist.py --explain NAME
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import sys
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import derive_denylist as dd

OUT = Path(__file__).resolve().parent.parent / "app" / "core" / "scanners" / "data" / "library_allowlist.json"
DENYLIST = OUT.parent / "dangerous_callables.json"
MAX_DEPTH = 6


def _words(text: str) -> list[str]:
    return text.split()


USE_METHODS: dict[str, tuple[str, ...]] = {
    "new": ("__new__", "__array_finalize__"),
    "call": ("__new__", "__array_finalize__", "__init__"),
    "build": ("__setstate__", "__setattr__", "__getattr__", "__getattribute__"),
    "items": ("__setitem__", "append", "extend", "add"),
}
ALWAYS = ("__del__",)
PURE_BUILTINS = frozenset(_words("""
    isinstance issubclass len hasattr getattr setattr super type id hash abs min max sum round
    divmod dict list tuple set frozenset str bytes bytearray int float complex bool range enumerate
    zip sorted reversed iter repr format object slice any all ord chr callable
"""))
# numpy functions and scalar types that compute on array data only (C ufuncs and constructors;
# nothing that reads files, loads pickles or takes a callable): ``np.log2(x)`` in gensim's smartirs_*.
PURE_NUMPY = frozenset(_words("""
    log log2 log10 log1p exp sqrt abs absolute sign sum prod mean max min maximum minimum dot divide
    multiply add subtract power square zeros ones empty full zeros_like ones_like empty_like array
    asarray arange int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 bool_
    intc dtype isscalar ndim shape size float_ double sort argsort cumsum where isnan isinf clip
"""))
CONSTANT_NAME_BUILTINS = frozenset({"getattr", "hasattr", "setattr"})
DATA_METHODS = frozenset(_words("""
    get pop popitem items keys values update setdefault copy clear append extend insert remove add
    discard startswith endswith split rsplit join format lower upper strip lstrip rstrip replace
    encode decode index count __setstate__ __init__ __new__ __setattr__ __getattribute__ __setitem__
    __getitem__ __contains__ __eq__ __hash__ __len__ __iter__ __reduce__ __reduce_ex__ __getstate__
    max min mean sum astype reshape ravel flatten nonzero any all cumsum argsort
"""))  # the last line: numpy array methods (data), e.g. ``tf.max(axis=0)`` in smartirs_wlocal
OBJECT_METHODS = frozenset({"__init__", "__new__", "__setstate__", "__setattr__", "__getattribute__",
                            "__setitem__", "__getitem__", "__delattr__", "__getstate__", "update",
                            "__init_subclass__", "__eq__", "__hash__", "__contains__", "__len__", "append", "extend",
                            "add", "__reduce__", "__reduce_ex__"})
SAFE_EXTERNAL_BASES = frozenset({
    "builtins.object", "builtins.dict", "builtins.list", "builtins.tuple", "builtins.set",
    "builtins.frozenset", "builtins.str", "builtins.int", "builtins.float", "builtins.Exception",
    "builtins.ValueError", "builtins.TypeError", "builtins.RuntimeError", "builtins.KeyError",
    "builtins.AttributeError", "builtins.UserWarning", "builtins.Warning", "builtins.DeprecationWarning",
    "builtins.FutureWarning", "builtins.RuntimeWarning", "builtins.NotImplementedError",
    "abc.ABC", "collections.OrderedDict", "typing.Generic", "typing.NamedTuple",
    # abstract mixins: their own methods (get, keys, items, __contains__, __eq__) read through __getitem__
    "collections.abc.Mapping", "collections.abc.MutableMapping", "collections.Mapping",
    "collections.MutableMapping", "collections.abc.Sequence",
    "collections.abc.Iterable", "collections.abc.Sized", "collections.abc.Container",
})
SAFE_EXTERNAL_CALLS = frozenset({"warnings.warn", "logging.getLogger", "collections.defaultdict",
                                 "collections.OrderedDict", "collections.Counter", "collections.deque",
                                 *(f"math.{n}" for n in _words("log log2 log10 log1p exp sqrt floor ceil fabs isnan")),
                                 "builtins.object.__setattr__",
                                 "builtins.object.__new__", "builtins.object.__init__", "builtins.dict.__init__",
                                 "builtins.dict.__setitem__", "builtins.dict.update", "builtins.list.__init__",
                                 "builtins.object.__getattribute__", "builtins.object.__setstate__"})
LOGGER_NAMES = frozenset({"logger", "log", "_logger", "LOGGER", "logging"})
LOGGER_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})

# What the parse cannot see, reviewed by hand: uses, argument rule (library_packs._RULES), why.
_NUMPY_RANDOM = "numpy/random/_pickle.py"
HAND_PICKED: dict[str, dict[str, str | bool]] = {
    "gensim.models.tfidfmodel.smartirs_normalize": {
        "library": "gensim", "uses": "call",
        "why": "gensim/models/tfidfmodel.py: returns x or matutils.unitvec(x) (numpy/scipy arithmetic on "
               "the vector it is given); its @deprecated wrapper only warns. TfidfModel keeps "
               "partial(smartirs_normalize, norm_scheme=...)"},
    "builtins.hash": {
        "library": "builtins", "uses": "value", "overrides_module": True,
        "why": "gensim's Word2Vec keeps hashfxn=hash in its state; hash() only runs the __hash__ of an "
               "object the load built (and judged) itself. Held as a value only: a call in the stream is "
               "still critical"},
    "functools.partial": {
        "library": "functools", "uses": "call build", "rule": "partial-state",
        "why": "partial(func, *args, **kw) keeps func to call later: func (REDUCE argument 0 and BUILD "
               "state item 0) must itself be allowlisted for calls; the other state is held data "
               "(gensim's TfidfModel keeps partial(smartirs_wlocal, ...))"},
    "numpy.random.__RandomState_ctor": {
        "library": "numpy", "uses": "call build", "rule": "no-arguments",
        "why": "numpy/random/__init__.py: returns RandomState(seed=0); BUILD then runs RandomState."
               "__setstate__ -> set_state, which checks the bit generator name and copies the key array"},
    "numpy.random._pickle.__randomstate_ctor": {
        "library": "numpy", "uses": "call build", "rule": "random-state-ctor",
        "why": f"{_NUMPY_RANDOM}: RandomState(bit_generator_ctor(name)); the ctor argument is called, so it "
               "must be __bit_generator_ctor and the name one of numpy's bit generators; BUILD: set_state"},
    "numpy.random._pickle.__generator_ctor": {
        "library": "numpy", "uses": "call build", "rule": "random-state-ctor",
        "why": f"{_NUMPY_RANDOM}: Generator(bit_generator_ctor(name)) or Generator(bit_generator); same "
               "argument rule as __randomstate_ctor"},
    "numpy.random._pickle.__bit_generator_ctor": {
        "library": "numpy", "uses": "call build", "rule": "bit-generator-ctor",
        "why": f"{_NUMPY_RANDOM}: instantiates the class given or looked up by name in numpy's own table: "
               "only numpy's five bit generators pass; BUILD sets the state dict (checked by the setter)"},
    "numpy.random.bit_generator.__pyx_unpickle_SeedSequence": {
        "library": "numpy", "uses": "call build", "rule": "seed-sequence",
        "why": "Cython's unpickle helper of SeedSequence (bit_generator.pyx): checks a checksum, "
               "SeedSequence.__new__, then assigns the state fields (given as its argument 2, or by "
               "BUILD through __setstate_cython__ when the state holds objects); argument 0 must be SeedSequence"},
    **{name: {"library": "numpy", "uses": "call build value",
              "why": "a Cython bit generator (numpy/random/*.pyx): __init__ seeds from a SeedSequence, "
                     "__setstate__ sets the state dict after checking its bit_generator name"}
       for name in ("numpy.random._mt19937.MT19937", "numpy.random._pcg64.PCG64",
                    "numpy.random._pcg64.PCG64DXSM", "numpy.random._philox.Philox", "numpy.random._sfc64.SFC64")},
    "numpy.random.bit_generator.SeedSequence": {
        "library": "numpy", "uses": "new value",
        "why": "bit_generator.pyx: a record of entropy words; only created through __pyx_unpickle_SeedSequence"},
    **{f"{mod}.recarray": {
        "library": "numpy", "uses": "new build value",
        "why": "numpy/_core/records.py: an ndarray subclass; _reconstruct runs ndarray.__new__ and "
               "__array_finalize__ (re-sets its own dtype); its __getattribute__/__setattr__ read and write "
               "fields of the array data only; BUILD is ndarray.__setstate__ (C, data)"}
       for mod in ("numpy.core.records", "numpy._core.records")},
    **{f"{mod}.record": {
        "library": "numpy", "uses": "value",
        "why": "numpy/_core/records.py: the scalar type of a record dtype, named as numpy.dtype's argument "
               "(statsmodels' results); a value, not instantiated by the stream"}
       for mod in ("numpy.core.records", "numpy._core.records")},
}


class Deriver:
    def __init__(self, modules: dict[str, dd.Module], denylist: dict[str, list[str]]) -> None:
        self.modules = modules
        self.graph = dd.Graph(modules)
        self.denylist = denylist
        self._memo: dict[str, str | None] = {}
        self._active: set[str] = set()
        # Container/str method names safe bodies call on values other than self.__dict__: a class
        # whose own method of such a name is unsafe is refused (see ``refused_by_data_methods``).
        self.called_data_methods: set[str] = set()

    def why(self, name: str) -> str:
        if self._is_class(name):
            uses, reasons = self.class_uses(name)
            refused = self.refused_by_data_methods(name)
            tail = f"; refused: {refused}" if refused else ""
            return f"uses {' '.join(uses) or 'none'}; " + "; ".join(reasons) + tail
        mod = self._module_of(name)
        if mod is None or name not in mod.bodies:
            return "not defined in these sources"
        return self.body_problem(name, 0) or "a function whose body only computes on its arguments"

    # -- classes
    def class_uses(self, cls: str) -> tuple[list[str], list[str]]:
        """(uses vouched for, reasons) of one parsed class."""
        if cls == NAMEDTUPLE:
            return ["new", "call"], ["a namedtuple: its generated __new__ only packs its fields into a tuple"]
        base_problem = self._external_base(cls, set())
        if base_problem:
            return [], [base_problem]
        reasons: list[str] = []
        fatal = [p for m in ALWAYS if (p := self._method_problem(cls, m))]
        if fatal:
            return [], fatal
        uses = []
        for use, methods in USE_METHODS.items():
            problems = [p for m in methods if (p := self._method_problem(cls, m))]
            if problems:
                reasons.append(f"not {use}: {problems[0]}")
            else:
                uses.append(use)
        ran = sorted({m for ms in USE_METHODS.values() for m in ms if self.graph.lookup(cls, m)})
        reasons.insert(0, f"own load-time methods: {', '.join(ran) or 'none (object defaults)'}")
        return uses, reasons

    def refused_by_data_methods(self, cls: str) -> str | None:
        """An unsafe method named like one a vouched body calls on a state value (``state.pop(...)``):
        an instance of this class handed over as that value would run it."""
        for method in sorted(self.called_data_methods):
            if method.startswith("__"):
                continue  # protocol methods: judged as load-time methods where they run
            problem = self._method_problem(cls, method)
            if problem and "which reaches" in problem:
                return f"its {method}() is called on state values by vouched code and reaches a sink: {problem}"
        return None

    def _external_base(self, cls: str, seen: set[str]) -> str | None:
        mod_name, _, name = cls.rpartition(".")
        mod = self.modules.get(mod_name)
        if mod is None or name not in mod.classes or cls in seen:
            return None
        seen.add(cls)
        for base in mod.classes[name]:
            target = self.graph.local(mod, base)
            if target in SAFE_EXTERNAL_BASES or base in ("object", "ABC") or _namedtuple(base):
                continue
            if self._is_class(target):
                problem = self._external_base(target, seen)
                if problem:
                    return problem
                continue
            return f"base {base} ({target}) is not parsed here"
        return None

    def _is_class(self, dotted: str) -> bool:
        if dotted == NAMEDTUPLE:
            return True
        mod_name, _, name = dotted.rpartition(".")
        mod = self.modules.get(mod_name)
        return mod is not None and name in mod.classes

    def _method_problem(self, cls: str, method: str) -> str | None:
        found = self.graph.lookup(cls, method)
        if found is None:
            return None  # object's or a safe builtin base's own C method
        problem = self.body_problem(found, 0)
        return None if problem is None else f"{found.removeprefix(cls.rpartition('.')[0] + '.')}: {problem}"

    # -- bodies
    def body_problem(self, node: str, depth: int) -> str | None:
        if node in self._memo:
            return self._memo[node]
        if node in self._active:
            return None  # a cycle: judged by the rest of its body
        if depth > MAX_DEPTH:
            return f"calls deeper than {MAX_DEPTH}"
        mod = self._module_of(node)
        if mod is None or node not in mod.bodies:
            return f"{node} has no parsed body"
        self._active.add(node)
        try:
            problem = _decorated(mod.bodies[node]) or self._walk(mod, node, depth)
        finally:
            self._active.discard(node)
        self._memo[node] = problem
        return problem

    def _module_of(self, node: str) -> dd.Module | None:
        parts = node.split(".")
        for i in range(len(parts) - 1, 0, -1):
            mod = self.modules.get(".".join(parts[:i]))
            if mod is not None:
                return mod
        return None

    def _walk(self, mod: dd.Module, node: str, depth: int) -> str | None:
        cls = dd._class_of(mod, node)
        for stmt in mod.bodies[node]:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Call):
                    problem = self._call_problem(mod, cls, sub, depth)
                elif isinstance(sub, ast.Attribute) and cls and _is_self(sub.value):
                    problem = self._property_problem(cls, sub.attr, depth)
                elif isinstance(sub, (ast.Lambda, ast.Yield, ast.YieldFrom, ast.Await)):
                    problem = f"uses {type(sub).__name__.lower()}"
                else:
                    continue
                if problem:
                    return problem
        return None

    def _property_problem(self, cls: str, attr: str, depth: int) -> str | None:
        found = self.graph.lookup(cls, attr)
        if found is None or attr.startswith("__"):
            return None
        return self.body_problem(found, depth + 1)

    def _call_problem(self, mod: dd.Module, cls: str | None, call: ast.Call, depth: int) -> str | None:
        func = call.func
        text = ast.unparse(func)[:80]
        if isinstance(func, ast.Name):
            if func.id in CONSTANT_NAME_BUILTINS:
                return None if _constant_name(call) else f"{func.id}() with a computed name"
            if func.id in PURE_BUILTINS and func.id not in mod.functions and func.id not in mod.aliases:
                return None
            return self._resolved_problem(self.graph.local(mod, func.id), text, depth)
        if not isinstance(func, ast.Attribute):
            return f"calls {text} (a computed callable)"
        base = func.value
        if _is_super(base):
            return self._super_problem(mod, cls, func.attr, depth)
        if _is_self(base) and cls:
            found = self.graph.lookup(cls, func.attr)
            if found:
                return self.body_problem(found, depth + 1)
            return None if func.attr in OBJECT_METHODS else f"calls self.{func.attr} (not a method of the class)"
        if isinstance(base, ast.Name) and base.id in LOGGER_NAMES and func.attr in LOGGER_METHODS:
            return None
        dotted = dd._dotted(func)
        if dotted and dotted.partition(".")[0] in ("np", "numpy") and dotted.partition(".")[2] in PURE_NUMPY:
            return None
        if dotted and dd._head_known(self.graph, mod, dotted):
            return self._resolved_problem(self.graph.local(mod, dotted), text, depth)
        if func.attr in DATA_METHODS:
            # A container/str method on a value: every object a load gives a vouched class is a
            # builtin or itself vouched, and a class whose own method of such a name is unsafe is refused.
            if not (isinstance(base, ast.Attribute) and base.attr == "__dict__") and not isinstance(base, ast.Constant):
                self.called_data_methods.add(func.attr)
            return None
        return f"calls {text} (not proven safe)"

    def _super_problem(self, mod: dd.Module, cls: str | None, attr: str, depth: int) -> str | None:
        if cls is None:
            return "super() outside a class"
        _, _, name = cls.rpartition(".")
        for base in mod.classes[name]:
            found = self.graph.lookup(self.graph.local(mod, base), attr)
            if found:
                return self.body_problem(found, depth + 1)
        return None if attr in OBJECT_METHODS else f"calls super().{attr} outside the parsed sources"

    def _resolved_problem(self, target: str, text: str, depth: int) -> str | None:
        if target in SAFE_EXTERNAL_CALLS or target.removeprefix("builtins.") in PURE_BUILTINS:
            return None
        if target.startswith("builtins.") and target.endswith(("Error", "Exception", "Warning")):
            return None  # building a builtin exception to raise or warn with
        if target in self.denylist:
            category, _kind, _hop, sink = self.denylist[target]
            return f"calls {text}, which reaches {category} via {sink}"
        if self._is_class(target):
            for method in USE_METHODS["call"]:
                problem = self._method_problem(target, method)
                if problem:
                    return f"instantiates {target}: {problem}"
            return None
        mod = self._module_of(target)
        if mod is not None and target in mod.bodies:
            return self.body_problem(target, depth + 1)
        return f"calls {text} ({target}: not parsed, not proven safe)"


def _decorated(body: list[ast.AST]) -> str | None:
    """A decorator's wrapper runs instead of the body: not proven (property, static and class methods aside)."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in stmt.decorator_list:
                text = ast.unparse(decorator)
                if text not in ("property", "staticmethod", "classmethod") and not text.endswith(".setter"):
                    return f"decorated with @{text[:60]}"
    return None


def _namedtuple(base: str) -> bool:
    """``class Doctag(namedtuple('Doctag', ...))``: a tuple whose generated __new__ takes the fields."""
    return base.startswith(("namedtuple(", "collections.namedtuple("))


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def _is_super(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _constant_name(call: ast.Call) -> bool:
    return len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str)


# -- the packs
def parse_sources(sources: dict[str, Path]) -> dict[str, dd.Module]:
    modules: dict[str, dd.Module] = {}
    for name, root in sources.items():
        for mod_name, path in dd.package_files(name, root):
            mod = dd.parse_module(mod_name, path)
            if mod is not None:
                modules[mod_name] = mod
    return modules


Derived = dict[str, dict[str, list[str]]]  # library -> name -> [uses, reasons]


def derive(sources: dict[str, Path], packs: list[str], functions: list[str]) -> tuple[Derived, set[str]]:
    """The vouched entries of one set of sources, and every class or alias name the packs define."""
    modules = parse_sources(sources)
    deriver = Deriver(modules, _denylist())
    out: Derived = {}
    targets: dict[str, str] = {}  # entry -> the class it is (itself, or an alias's target)
    defined: set[str] = set()
    for mod_name in sorted(modules):
        library = _pack_of(mod_name, packs)
        if library is None:
            continue
        mod = modules[mod_name]
        section = out.setdefault(library, {})
        for name, target in _pack_names(deriver, mod):
            defined.add(name)
            uses, reasons = deriver.class_uses(target)
            if "new" in uses or "call" in uses:
                alias = "" if name == target or target == NAMEDTUPLE else f"alias of {target}; "
                section[name] = [" ".join(uses), alias + "; ".join(reasons)]
                targets[name] = target
        for name in sorted(mod.functions):
            full = f"{mod_name}.{name}"
            if any(fnmatch.fnmatchcase(full, pattern) for pattern in functions):
                defined.add(full)
                if deriver.body_problem(full, 0) is None:
                    section[full] = ["call", "a function whose body only computes on its arguments"]
    for section in out.values():  # after every body was walked: the method names vouched code calls
        for name, target in targets.items():
            if name in section and target != NAMEDTUPLE and deriver.refused_by_data_methods(target):
                del section[name]
    return {k: v for k, v in out.items() if v}, defined


def _pack_names(deriver: Deriver, mod: dd.Module) -> list[tuple[str, str]]:
    """(name a pickle can import, the class it is): classes, and aliases/imports of parsed classes
    (``Word2VecKeyedVectors = KeyedVectors``, ``from .keyedvectors import Vocab``)."""
    found = [(f"{mod.name}.{c}", f"{mod.name}.{c}") for c in sorted(mod.classes)]
    found += [(f"{mod.name}.{n}", NAMEDTUPLE) for n in _namedtuple_assignments(mod)]
    for local in sorted(mod.aliases):
        if local not in mod.classes and local not in mod.functions:
            target = deriver.graph.local(mod, local)
            if deriver._is_class(target):
                found.append((f"{mod.name}.{local}", target))
    return found


NAMEDTUPLE = "<namedtuple>"


def _namedtuple_assignments(mod: dd.Module) -> list[str]:
    """``ConstrNode = collections.namedtuple('ConstrNode', ...)`` at module level (morfessor)."""
    names = []
    for stmt in mod.bodies.get(mod.name, []):
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name) and _namedtuple(ast.unparse(stmt.value)):
            names.append(stmt.targets[0].id)
    return sorted(names)


def merge_versions(runs: list[tuple[str, Derived, set[str]]]) -> Derived:
    """One entry per name over several versions of a library: the uses every version that defines
    the name vouches for (a name only one version defines only imports under that one)."""
    merged: Derived = {}
    for version, derived, _ in runs:
        for library, section in derived.items():
            target = merged.setdefault(library, {})
            tag = f"[{version}] " if version.partition(" ")[0] == library else ""
            for name, (uses, reason) in section.items():
                if name not in target:
                    target[name] = [uses, tag + reason]
                elif tag:  # a further version of this library: only what both vouch for
                    kept = [u for u in target[name][0].split() if u in uses.split()]
                    target[name] = [" ".join(kept), f"{target[name][1]} | {tag}{reason}"]
    for _version, derived, defined in runs:  # defined by a version that vouched for none of its uses
        for section in merged.values():
            for name in list(section):
                if name in defined and not any(name in s for s in derived.values()):
                    del section[name]
    return {k: {n: e for n, e in v.items() if e[0]} for k, v in merged.items()}


def _pack_of(mod_name: str, packs: list[str]) -> str | None:
    for pack in packs:
        if mod_name == pack or mod_name.startswith(pack + "."):
            return pack.split(".")[0]
    return None


def _denylist() -> dict[str, list[str]]:
    data = json.loads(DENYLIST.read_text(encoding="utf-8"))
    found: dict[str, list[str]] = {}
    for section in data["derived"].values():
        found.update(section)
    return found


def _not_dangerous(derived: dict[str, dict[str, list[str]]]) -> dict[str, dict[str, list[str]]]:
    """Drop what the catalog calls dangerous whatever the pack says (packs never override the denylist)."""
    from app.core.scanners.pickle_engine import catalog

    kept: dict[str, dict[str, list[str]]] = {}
    for library, section in derived.items():
        for name, entry in section.items():
            module, _, attr = name.rpartition(".")
            if catalog._classify_one(module, attr).verdict is catalog.Verdict.DANGEROUS:
                print(f"{name}: the catalog calls it dangerous; not written")
                continue
            kept.setdefault(library, {})[name] = entry
    return kept


def render(header: dict[str, object], derived: dict[str, dict[str, list[str]]]) -> str:
    """JSON with one entry per line, so that a regenerated list reviews as a readable diff."""
    lines = [f"{json.dumps(key)}: {json.dumps(value, sort_keys=True)}," for key, value in sorted(header.items())]
    sections = ",\n".join(f"{json.dumps(name)}: {_entries(entries)}" for name, entries in sorted(derived.items()))
    lines += [f'"derived": {{\n{sections}\n}},', f'"hand_picked": {_entries(HAND_PICKED)}']
    return "{\n" + "\n".join(lines) + "\n}\n"


def _entries(entries: dict[str, object]) -> str:
    body = ",\n".join(f"{json.dumps(name)}: {json.dumps(value, sort_keys=True)}"
                      for name, value in sorted(entries.items()))
    return "{\n" + body + "\n}"


def explain(name: str) -> str:
    shipped = json.loads(OUT.read_text(encoding="utf-8"))
    if name in shipped["hand_picked"]:
        item = shipped["hand_picked"][name]
        return f"hand-picked ({item['uses']}): {item['why']}"
    for library, section in shipped["derived"].items():
        if name in section:
            uses, reasons = section[name]
            return f"{library} ({uses}): {reasons}"
    return f"{name}: not in the packs (unknown to the catalog unless allowlisted elsewhere)"


def _source_sets(specs: list[str]) -> list[tuple[dict[str, Path], str]]:
    """One set of sources per version: the first version of each package, then each further
    version of a package in place of its first (``--source gensim=A@4.3.3 --source gensim=B@3.8.3``)."""
    first: dict[str, tuple[Path, str]] = {}
    later: list[tuple[str, Path, str]] = []
    for spec in specs:
        name, _, rest = spec.partition("=")
        directory, _, version = rest.partition("@")
        if name in first:
            later.append((name, Path(directory), version or "unknown"))
        else:
            first[name] = (Path(directory), version or "unknown")
    base = {n: d for n, (d, _) in first.items()}
    repeated = {n for n, _, _ in later}
    sets = [(base, " ".join(f"{n} {v}" for n, (_, v) in sorted(first.items()) if n in repeated))]
    for name, directory, version in later:
        sets.append(({**base, name: directory}, f"{name} {version}"))
    return sets


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", action="append", default=[], metavar="NAME=DIR[@VERSION]",
                        help="a package directory to parse (never imported); its version is recorded")
    parser.add_argument("--pack", action="append", default=[], help="module prefix whose classes are packed")
    parser.add_argument("--function", action="append", default=[], help="glob of functions to pack (for partial)")
    parser.add_argument("--explain", metavar="NAME", help="print the shipped derivation of one entry")
    parser.add_argument("--why", action="append", default=[], metavar="NAME",
                        help="derive from --source and print why NAME is (not) vouched for, per version")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.explain:
        print(explain(args.explain))
        return 0
    if args.why:
        for sources, label in _source_sets(args.source):
            deriver = Deriver(parse_sources(sources), _denylist())
            for name in args.why:
                print(f"[{label}] {name}: {deriver.why(name)}")
        return 0
    if not OUT.exists():  # the catalog reads the file; derived entries never change a dangerous verdict
        OUT.write_text(render({}, {}), encoding="utf-8")
    runs = []
    for sources, label in _source_sets(args.source):
        derived, defined = derive(sources, args.pack, args.function)
        runs.append((label, derived, defined))
    versions = sorted({spec.partition("=")[0] + "@" + spec.partition("@")[2] for spec in args.source})
    derived = _not_dangerous(merge_versions(runs))
    header = {
        "about": "Generated by scripts/derive_allowlist.py: do not edit by hand (docs/detection.md).",
        "sources": versions, "packs": sorted(args.pack), "functions": sorted(args.function),
        "max_depth": MAX_DEPTH,
    }
    OUT.write_text(render(header, derived), encoding="utf-8")
    print(f"wrote {sum(len(s) for s in derived.values())} derived entries, {len(HAND_PICKED)} hand-picked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
