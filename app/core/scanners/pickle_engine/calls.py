"""Judge what a load would call: REDUCE/INST/OBJ/NEWOBJ targets, ``__setstate__`` through
BUILD, and the ``__setitem__``/``append``/``setattr`` a load runs on the objects it built.

An import alone is a medium note; calling a callable that is not on the allowlist is at
least high, and critical when the arguments look like a command, code, a system path or a
URL. Allowlisted callables that themselves call, instantiate or keep their arguments for
later calls (see ``catalog.ARGUMENT_CALLERS``) must receive allowlisted arguments.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from app.core.findings import Severity
from app.core.scanners.pickle_engine import library_packs
from app.core.scanners.pickle_engine.catalog import (
    ARGUMENT_CALLERS,
    INSTANTIATED_ARGUMENT,
    Verdict,
    canonical,
    classify,
)
from app.core.scanners.pickle_engine.values import (
    Call,
    Const,
    DictVal,
    GlobalRef,
    ListVal,
    Opaque,
    TupleVal,
    Value,
    describe,
    leaves,
)

RULE_UNKNOWN_CALL = "pickle-unknown-call"
RULE_SUSPICIOUS_CALL = "pickle-suspicious-call"
RULE_DYNAMIC_CALL = "pickle-dynamic-call"
RULE_UNSAFE_ARGUMENT = "pickle-unsafe-argument"
RULE_OBJECT_MUTATION = "pickle-object-mutation"
RULE_MUTATION = "pickle-global-mutation"
RULE_DANGEROUS = "pickle-dangerous-global"

# How a load uses a callable, by opcode (library_packs.USES): NEWOBJ only runs __new__.
_USE_BY_OPCODE = {"NEWOBJ": "new", "NEWOBJ_EX": "new"}
# Allowlisted callables whose argument at a position is instantiated without __init__.
_NEW_ARGUMENTS: dict[str, int] = {
    "copyreg.__newobj__": 0, "copyreg.__newobj_ex__": 0, "copyreg._reconstructor": 0,
    "numpy.core.multiarray._reconstruct": 0, "numpy._core.multiarray._reconstruct": 0,
}

# Argument text that looks like a command or Python source.
COMMAND_OR_CODE = re.compile(
    r"/bin/(ba|z|da)?sh\b|\b(sh|bash|cmd(\.exe)?|powershell)\s+[-/]|\b(curl|wget|nc|ncat)\s"
    r"|/dev/tcp/|\brm\s+-|\bchmod\s|\becho\s|\bpython[0-9.]*\s+-c\b|__import__|\bimport\s+(os|subprocess|socket)"
    r"|\bos\.(system|popen)|\bsubprocess\.|\beval\(|\bexec\(|base64\s+-d",
    re.IGNORECASE,
)
# URLs and sensitive system paths: suspicious as call arguments, not in object state (BUILD
# state, items added to an object), where a trainer's output_dir of /root/... or a config's
# hub URL is ordinary data.
URL_OR_SYSTEM_PATH = re.compile(
    r"(https?|ftp)://|(^|[\s'\"=:])(/etc|/root|/proc|/sys|/boot|/bin|/sbin|/usr/s?bin|/var/spool|/dev/shm)/"
    r"|~/|/\.ssh\b|\.bashrc\b|\.profile\b|authorized_keys|[A-Za-z]:\\\\(windows|users)\\\\",
    re.IGNORECASE,
)
_SCALARS = (Const, Call, Opaque)  # what holds no global where leaves() looks (it does not enter calls)
_LEAF_DEPTH = 4  # container levels searched for globals handed to an allowlisted callable (leaves' default)


@dataclass(frozen=True)
class CallFinding:
    rule: str
    severity: Severity
    message: str
    evidence: str


def quiet_call(func: GlobalRef, args: Value) -> bool:
    """Whether ``judge_call`` finds nothing, decided cheaply: an allowlisted callable that neither
    calls nor instantiates its arguments, handed no non-allowlisted global it could keep."""
    return keeps_nothing_callable(func.module, func.name) and not holds_unsafe_global(args)


def holds_unsafe_global(args: Value) -> bool:
    """Whether call arguments hold a non-allowlisted global where ``_unsafe_arguments`` looks."""
    return _holds_unsafe_global(args, _LEAF_DEPTH + 1)


@functools.lru_cache(maxsize=4096)
def keeps_nothing_callable(module: str, name: str) -> bool:
    dotted = canonical(module, name)
    return (classify(module, name).verdict is Verdict.SAFE and dotted not in ARGUMENT_CALLERS
            and dotted not in INSTANTIATED_ARGUMENT and library_packs.lookup(dotted) is None)


def vouched_call(func: GlobalRef, opcode: str = "") -> bool:
    """Whether calling ``func`` this way is on the allowlist (a pack entry only for the uses it lists)."""
    return (classify(func.module, func.name).verdict is Verdict.SAFE
            and library_packs.allows(canonical(func.module, func.name), _USE_BY_OPCODE.get(opcode, "call")))


def judge_call(func: Value, args: Value, where: str, opcode: str = "") -> list[CallFinding]:
    """``opcode``: REDUCE/INST/OBJ (or unknown, "") run ``__init__``; NEWOBJ(_EX) only ``__new__``."""
    if isinstance(func, GlobalRef):
        return _pack_use(func, args, where, opcode) + _judge_global_call(func, args, where)
    text = suspicious_text(args)
    found = [CallFinding(RULE_DYNAMIC_CALL, Severity.HIGH,
                         f"{where} calls the {describe(func)}, a callable obtained at load time", describe(func))]
    if text is not None:
        found.append(_suspicious(describe(func), text, where))
    return found


def _judge_global_call(func: GlobalRef, args: Value, where: str) -> list[CallFinding]:
    verdict = classify(func.module, func.name).verdict
    found = _unsafe_arguments(func, args, where)
    if verdict is Verdict.SAFE:
        return found + _instantiated(func, args, where)  # its argument text is its own business
    if verdict is Verdict.UNKNOWN:
        found.append(CallFinding(RULE_UNKNOWN_CALL, Severity.HIGH,
                                 f"{where} calls {func.dotted}, which is not on the allowlist: the load runs "
                                 "its code", func.dotted))
    text = suspicious_text(args)
    if text is not None:
        found.append(_suspicious(func.dotted, text, where))
    return found


def _pack_use(func: GlobalRef, args: Value, where: str, opcode: str) -> list[CallFinding]:
    """A library-pack entry called in a way its pack does not vouch for, or with arguments its rule refuses."""
    dotted = canonical(func.module, func.name)
    entry = library_packs.lookup(dotted)
    if entry is None or classify(func.module, func.name).verdict is not Verdict.SAFE:
        return []
    use = _USE_BY_OPCODE.get(opcode, "call")
    if not entry.allows(use):
        if entry.overrides_module:  # a builtin allowed as a value only, called here
            return [CallFinding(RULE_DANGEROUS, Severity.CRITICAL,
                                f"{where} calls {dotted}: allowlisted only as a value held in state, never "
                                f"as a call ({entry.reason})", dotted)]
        return [CallFinding(RULE_UNKNOWN_CALL, Severity.HIGH,
                            f"{where} calls {dotted} ({opcode or 'a call'} runs its {_ran(use)}), which its "
                            f"{entry.library} pack allows only as {', '.join(sorted(entry.uses))}: {entry.reason}",
                            dotted)]
    problem = library_packs.argument_problem(dotted, args)
    if problem is None:
        return []
    return [CallFinding(RULE_UNSAFE_ARGUMENT, Severity.CRITICAL,
                        f"{where}: {dotted} {problem}: not the pickle {entry.library} writes",
                        f"{dotted}({describe(args)})")]


def _ran(use: str) -> str:
    return "__new__" if use == "new" else "__init__ (or body)"


def _unsafe_arguments(func: GlobalRef, args: Value, where: str) -> list[CallFinding]:
    """Arguments an allowlisted callable calls, instantiates or keeps for a later call."""
    items = args.items if isinstance(args, TupleVal) else ()
    called = ARGUMENT_CALLERS.get(canonical(func.module, func.name), ())
    found = []
    dotted = canonical(func.module, func.name)
    for index in called:
        arg = items[index] if index < len(items) else None
        use = "new" if _NEW_ARGUMENTS.get(dotted) == index else "call"
        if arg is not None and not _is_none(arg) and not _is_safe_callable(arg, use):
            found.append(CallFinding(RULE_UNSAFE_ARGUMENT, Severity.CRITICAL,
                                     f"{where}: {func.dotted} calls its argument {index}, the {describe(arg)}, "
                                     "which is not on the allowlist", f"{func.dotted} <- {describe(arg)}"))
    if classify(func.module, func.name).verdict is not Verdict.SAFE:
        return found
    if not _holds_unsafe_global(args, _LEAF_DEPTH + 1):
        return found  # what the loop below would find, without building the leaf lists (every tensor call)
    skip = INSTANTIATED_ARGUMENT.get(canonical(func.module, func.name))
    for index, arg in enumerate(items):
        if index in called or index == skip:
            continue
        found += _unsafe_globals_in(arg, f"{where}: argument {index} of {func.dotted}", func.dotted)
    return found


def _unsafe_globals_in(value: Value, context: str, owner: str) -> list[CallFinding]:
    # An allowlisted object handed a non-allowlisted class or function can call it later.
    if not _holds_unsafe_global(value, _LEAF_DEPTH):
        return []
    return [
        CallFinding(RULE_UNSAFE_ARGUMENT, Severity.CRITICAL,
                    f"{context} holds {leaf.dotted}, a global that is not on the allowlist",
                    f"{owner} <- {leaf.dotted}")
        for leaf in leaves(value, max_depth=_LEAF_DEPTH)
        if isinstance(leaf, GlobalRef) and not _is_safe_value(leaf)
    ]


def _holds_unsafe_global(value: Value, depth: int) -> bool:
    """Whether a non-allowlisted global sits within ``depth`` container levels of ``value``.

    A cheap pre-test for ``leaves(value, max_depth=depth)``, which finds no global deeper than
    that (nor past its budget): when this says no, that walk finds nothing either. Level by
    level, like ``leaves``, without building its lists of leaves (this runs for every call).
    """
    level: list[Value] = [value]
    for remaining in range(depth, -1, -1):
        below: list[Value] = []
        for item in level:
            if isinstance(item, _SCALARS):
                continue  # most arguments: one test
            if isinstance(item, GlobalRef):
                if not _is_safe_value(item):
                    return True
            elif remaining == 0:
                continue
            elif isinstance(item, (TupleVal, ListVal)):
                below.extend(item.items)
            elif isinstance(item, DictVal):  # its string keys are constants
                below.extend(item.items.values())
                below.extend(item.others)
        if not below:
            return False
        level = below
    return False


def _instantiated(func: GlobalRef, args: Value, where: str) -> list[CallFinding]:
    """``copyreg._reconstructor(cls, ...)``: an instance of ``cls`` whose methods later run."""
    cls = instance_class_of(func, args)
    if cls is func or _is_safe_callable(cls, "new"):
        return []
    name = cls.dotted if isinstance(cls, GlobalRef) else describe(cls)
    return [CallFinding(RULE_UNKNOWN_CALL, Severity.HIGH,
                        f"{where} instantiates {name} through {func.dotted}: a class that is not on the "
                        "allowlist", name)]


def instance_class_of(func: Value, args: Value) -> Value:
    index = INSTANTIATED_ARGUMENT.get(canonical(func.module, func.name)) if isinstance(func, GlobalRef) else None
    if index is not None and isinstance(args, TupleVal) and index < len(args.items):
        return args.items[index]
    return func


def judge_build(target: Value, state: Value, where: str) -> list[CallFinding]:
    """BUILD runs ``target.__setstate__(state)`` (or setattr per slot-state entry)."""
    if isinstance(target, GlobalRef):
        return [_global_mutation(target, where)]
    if isinstance(target, (DictVal, ListVal, TupleVal, Const)):
        return []  # a container or constant: the real BUILD sets a plain __dict__ or fails
    if not isinstance(target, Call):  # a persistent id's object, a value past the memo cap...
        return [CallFinding(RULE_OBJECT_MUTATION, Severity.HIGH,
                            f"{where} gives state to the {describe(target)}, an object the analysis does not "
                            "model: its __setstate__ runs", describe(target))]
    cls = instance_class_of(target.func, target.args)
    if _is_safe_callable(cls, "build"):
        owner = cls.dotted if isinstance(cls, GlobalRef) else "?"
        return (_unsafe_globals_in(state, f"{where}: the state of a {owner}", owner)
                + _state_callers(owner, state, where) + _state_shape(owner, state, where))
    refused = _pack_refuses(cls, "build")
    if refused is not None:
        return [CallFinding(RULE_OBJECT_MUTATION, Severity.HIGH,
                            f"{where} gives state to a {refused.name} (its __setstate__ or setattr runs), which "
                            f"its {refused.library} pack does not vouch for: {refused.reason}", refused.name)]
    name = cls.dotted if isinstance(cls, GlobalRef) else describe(cls)
    found = []
    if _has_slot_state(state):
        found.append(CallFinding(RULE_OBJECT_MUTATION, Severity.HIGH,
                                 f"{where} sets attributes one by one (setattr) on an instance of {name}, "
                                 "which is not on the allowlist", name))
    text = suspicious_text(state, paths=False)
    if text is not None:
        found.append(_suspicious(f"{name}.__setstate__", text, where))
    return found


def judge_mutation(target: Value, values: Value, where: str) -> list[CallFinding]:
    """SETITEM(S)/APPEND(S)/ADDITEMS run the target's own ``__setitem__``/``append``/``add``."""
    if isinstance(target, GlobalRef):
        return [_global_mutation(target, where)]
    if isinstance(target, (DictVal, ListVal, TupleVal, Const)):
        return []  # a builtin container the stream built: plain data
    cls = instance_class_of(target.func, target.args) if isinstance(target, Call) else target
    if _is_safe_callable(cls, "items"):  # an OrderedDict of backward hooks holds callables too
        owner = cls.dotted if isinstance(cls, GlobalRef) else "?"
        return _unsafe_globals_in(values, f"{where}: an item of a {owner}", owner)
    name = cls.dotted if isinstance(cls, GlobalRef) else describe(cls)
    found = [CallFinding(RULE_OBJECT_MUTATION, Severity.HIGH,
                         f"{where} adds items to an instance of {name}, which is not on the allowlist: the "
                         "load runs its item methods", name)]
    # Items are the object's state, as BUILD's are: a path or URL among them is data (a
    # Lightning AttributeDict's data_dir="/root/data"); a command or code string is not.
    text = suspicious_text(values, paths=False)
    if text is not None:
        found.append(_suspicious(f"{name} item", text, where))
    return found


def _global_mutation(target: GlobalRef, where: str) -> CallFinding:
    return CallFinding(RULE_MUTATION, Severity.CRITICAL,
                       f"{where} changes attributes or items of the imported {target.dotted} "
                       "(attribute-injection gadget)", target.dotted)


def _suspicious(callee: str, text: str, where: str) -> CallFinding:
    return CallFinding(RULE_SUSPICIOUS_CALL, Severity.CRITICAL,
                       f"{where}: {callee} is called with a command, code, system path or URL argument",
                       f"{callee}({text})")


def _state_callers(owner: str, state: Value, where: str) -> list[CallFinding]:
    """State entries the object calls later: ``functools.partial``'s BUILD state sets its func."""
    items = state.items if isinstance(state, TupleVal) else ()
    return [CallFinding(RULE_UNSAFE_ARGUMENT, Severity.CRITICAL,
                        f"{where}: the state of a {owner} sets the callable it calls to the {describe(items[i])}, "
                        "which is not on the allowlist", f"{owner} <- {describe(items[i])}")
            for i in library_packs.state_callers(owner)
            if i < len(items) and not _is_none(items[i]) and not _is_safe_callable(items[i])]


def _state_shape(owner: str, state: Value, where: str) -> list[CallFinding]:
    problem = library_packs.state_problem(owner, state)
    if problem is None:
        return []
    return [CallFinding(RULE_OBJECT_MUTATION, Severity.HIGH, f"{where}: {owner}: {problem}",
                        f"{owner}.__setstate__({describe(state)})")]


def _pack_refuses(value: Value, use: str) -> library_packs.PackEntry | None:
    """The pack entry of an allowlisted global that does not vouch for ``use``."""
    if not isinstance(value, GlobalRef) or classify(value.module, value.name).verdict is not Verdict.SAFE:
        return None
    entry = library_packs.lookup(canonical(value.module, value.name))
    return entry if entry is not None and not entry.allows(use) else None


def _is_safe_callable(value: Value, use: str = "call") -> bool:
    """An allowlisted global, and (for a library-pack entry) one vouched for this use."""
    return (isinstance(value, GlobalRef) and classify(value.module, value.name).verdict is Verdict.SAFE
            and library_packs.allows(canonical(value.module, value.name), use))


def _is_safe_value(value: GlobalRef) -> bool:
    """A global an allowlisted object may hold: one it could also call later, or a reviewed plain value."""
    return _is_safe_callable(value) or _is_safe_callable(value, "value")


def _is_none(value: Value) -> bool:
    return isinstance(value, Const) and value.value is None  # defaultdict(None), no factory


def _has_slot_state(state: Value) -> bool:
    return isinstance(state, TupleVal) and len(state.items) == 2 and isinstance(state.items[1], DictVal)


def suspicious_text(value: Value, paths: bool = True) -> str | None:
    """The first command/code text inside ``value`` (with ``paths``, also URLs and system paths)."""
    for leaf in leaves(value, max_depth=6, through_calls=True):
        if isinstance(leaf, Const) and isinstance(leaf.value, (str, bytes, bytearray)):
            raw = leaf.value
            text = raw if isinstance(raw, str) else bytes(raw).decode("latin-1")
            if COMMAND_OR_CODE.search(text) or (paths and URL_OR_SYSTEM_PATH.search(text)):
                return repr(text[:120])
    return None
