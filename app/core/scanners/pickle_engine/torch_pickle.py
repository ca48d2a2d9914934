"""Read a pickle of a torch archive the way torch's own unpicklers see it, without building anything.

What the generic engine does not model, and torch trusts:

- the storages ``persistent_load`` creates: ``('storage', <type>, key, location, numel)``
  (torch/serialization.py ``_load.persistent_load``; torch/csrc/jit/serialization/unpickler.cpp
  ``BINPERSID``), each ``numel * itemsize`` bytes over the record ``<dir>/<key>``;
- the target of ``SETITEM``/``SETITEMS`` (torch/_weights_only_unpickler.py ``load``);
- the globals, and every string (a lite-interpreter ``bytecode.pkl`` names its operators in strings).

Values are reduced to a kind (dict, list, storage, tensor, object of a class...). Opcodes this
reader does not follow move the stack as ``pickletools`` documents them.
"""

from __future__ import annotations

import pickletools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

from app.core.limits import LimitExceeded, Limits
from app.core.scanners.pickle_engine.reader import SKIPPED, BrokenStream, Op, OpReader

# Classes whose instances are dicts: the only SETITEM(S) targets torch >= 2.10 accepts
# (_weights_only_unpickler._check_set_item_target: dict, OrderedDict, Counter), plus
# defaultdict, a dict whose factory the generic engine judges.
DICT_CLASSES = frozenset({"builtins.dict", "collections.OrderedDict", "collections.Counter",
                          "collections.defaultdict", "__builtin__.dict"})
# torch's tensor rebuild helpers: their result is a tensor (torch/_utils.py, torch/_tensor.py).
_TENSOR_PREFIXES = ("torch._utils._rebuild_", "torch._tensor._rebuild_")
# torch/jit/_pickle.py: identity functions over their first argument (a list).
_JIT_LIST_BUILDERS = frozenset({"build_intlist", "build_tensorlist", "build_doublelist", "build_boollist",
                                "restore_type_tag"})
_MAX_STRINGS = 100_000  # strings kept per pickle (operator names, type tags)

_SPECS = {op.name: op for op in pickletools.opcodes}
_CONST_KINDS = frozenset({"int", "int_or_bool", "bytes_or_str", "bytes", "bytearray", "None", "bool", "str",
                          "float"})


@dataclass(frozen=True, slots=True)
class Val:
    kind: str  # dict list tuple const storage tensor global object other
    data: object = None  # const: the value; tuple: items; global/object: the dotted class name


_OTHER = Val("other")


@dataclass(frozen=True)
class StorageRef:
    """One ``persistent_load`` of a storage: the bytes torch will read from ``<dir>/<key>``."""

    key: str
    type_name: str  # e.g. FloatStorage, UntypedStorage
    numel: int
    pos: int


@dataclass(frozen=True)
class SetItemOnNonDict:
    opcode: str
    target: str  # the target's kind, or the class it is an instance of
    pos: int


@dataclass
class TorchPickle:
    globals: list[str] = field(default_factory=list)  # "module.name", first-seen order
    storages: list[StorageRef] = field(default_factory=list)
    setitem_faults: list[SetItemOnNonDict] = field(default_factory=list)
    strings: list[str] = field(default_factory=list)
    complete: bool = False  # read up to STOP with nothing it could not follow
    problem: str = ""  # why not complete


def read_torch_pickle(stream: BinaryIO, limits: Limits) -> TorchPickle:
    """The first pickle of ``stream`` (torch reads one per record)."""
    state = _State(TorchPickle())
    reader = OpReader(stream, limits.max_string_arg)
    try:
        for count in range(limits.max_pickle_opcodes + 1):
            if count == limits.max_pickle_opcodes:
                raise LimitExceeded(f"more than {limits.max_pickle_opcodes} opcodes")
            op = reader.next_op()
            if op is None:
                raise BrokenStream("stream ends before STOP", reader.pos)
            if op.name == "STOP":
                state.out.complete = True
                break
            state.step(op)
    except (BrokenStream, LimitExceeded) as exc:
        state.out.problem = str(exc)
    return state.out


class _State:
    def __init__(self, out: TorchPickle) -> None:
        self.out = out
        self.stack: list[Val] = []
        self.metastack: list[list[Val]] = []
        self.memo: dict[object, Val] = {}
        self._seen: set[str] = set()

    # -- stack primitives, failing where CPython's unpickler fails
    def pop(self, op: Op) -> Val:
        if not self.stack:
            raise BrokenStream(f"{op.name} on an empty stack", op.pos)
        return self.stack.pop()

    def pop_mark(self, op: Op) -> list[Val]:
        if not self.metastack:
            raise BrokenStream(f"{op.name} without a MARK", op.pos)
        items, self.stack = self.stack, self.metastack.pop()
        return items

    def step(self, op: Op) -> None:
        handler = _HANDLERS.get(op.name)
        if handler is not None:
            handler(self, op)
        else:
            self._generic(op)

    def _generic(self, op: Op) -> None:
        spec = _SPECS[op.name]
        before = [s.name for s in spec.stack_before]
        if "mark" in before:
            self.pop_mark(op)
            before = before[: before.index("mark")]
        for _ in before:
            self.pop(op)
        after = [s.name for s in spec.stack_after]
        for kind in after:
            self.stack.append(Val("const", op.arg) if kind in _CONST_KINDS and op.arg is not SKIPPED else _OTHER)

    # -- what torch trusts
    def add_global(self, dotted: str) -> Val:
        if dotted not in self._seen:
            self._seen.add(dotted)
            self.out.globals.append(dotted)
        return Val("global", dotted)

    def add_string(self, value: object) -> None:
        if isinstance(value, str) and len(self.out.strings) < _MAX_STRINGS:
            self.out.strings.append(value)

    def persistent(self, pid: Val, op: Op) -> Val:
        items = pid.data if pid.kind == "tuple" and isinstance(pid.data, tuple) else ()
        values = [v.data if v.kind in ("const", "global") else None for v in items]
        if len(values) >= 5 and values[0] == "storage" and isinstance(values[1], str) \
                and isinstance(values[2], str) and isinstance(values[4], int) and not isinstance(values[4], bool):
            self.out.storages.append(StorageRef(values[2], values[1].rsplit(".", 1)[-1], values[4], op.pos))
        return Val("storage")

    def set_item(self, target: Val, op: Op) -> None:
        fault = _non_dict(target)
        if fault is not None:
            self.out.setitem_faults.append(SetItemOnNonDict(op.name, fault, op.pos))


def _non_dict(target: Val) -> str | None:
    """What the target is when it is known not to be a dict (None: a dict, or unknown)."""
    if target.kind in ("dict", "other"):
        return None
    if target.kind == "object":
        name = str(target.data)
        # An instance of a class other than torch's could be a dict subclass: the generic engine
        # judges it (pickle-object-mutation). torch's own classes never take items.
        return f"an instance of {name}" if name.startswith("torch.") else None
    return {"list": "a list", "tuple": "a tuple", "const": "a constant", "storage": "a storage",
            "tensor": "a tensor", "global": f"the imported {target.data}"}.get(target.kind, target.kind)


def _result_of(func: Val, args: Val) -> Val:
    """What calling ``func`` (REDUCE, NEWOBJ) pushes, as far as torch's loaders make it."""
    if func.kind != "global":
        return _OTHER
    name = str(func.data)
    if name in DICT_CLASSES:
        return Val("dict")
    if name.startswith(_TENSOR_PREFIXES):
        return Val("tensor")
    module, _, short = name.rpartition(".")
    if module == "torch.jit._pickle" and short in _JIT_LIST_BUILDERS:
        items = args.data if args.kind == "tuple" and isinstance(args.data, tuple) else ()
        return items[0] if items else _OTHER
    return Val("object", name)


_Handler = Callable[["_State", Op], None]


def _const(s: _State, op: Op) -> None:
    s.add_string(op.arg)
    s.stack.append(_OTHER if op.arg is SKIPPED else Val("const", op.arg))


def _mark(s: _State, op: Op) -> None:
    s.metastack.append(s.stack)
    s.stack = []


def _push(kind: str) -> _Handler:
    value = Val(kind, ()) if kind == "tuple" else Val(kind)

    def handle(s: _State, op: Op) -> None:
        s.stack.append(value)

    return handle


def _from_mark(kind: str) -> _Handler:
    def handle(s: _State, op: Op) -> None:
        items = s.pop_mark(op)
        s.stack.append(Val(kind, tuple(items)) if kind == "tuple" else Val(kind))

    return handle


def _tuple_n(n: int) -> _Handler:
    def handle(s: _State, op: Op) -> None:
        items = [s.pop(op) for _ in range(n)][::-1]
        s.stack.append(Val("tuple", tuple(items)))

    return handle


def _global(s: _State, op: Op) -> None:
    if isinstance(op.arg, tuple):
        s.stack.append(s.add_global(f"{op.arg[0]}.{op.arg[1]}"))
    else:
        s.stack.append(_OTHER)


def _stack_global(s: _State, op: Op) -> None:
    name, module = s.pop(op), s.pop(op)
    if module.kind == "const" and name.kind == "const" and isinstance(module.data, str) \
            and isinstance(name.data, str):
        s.stack.append(s.add_global(f"{module.data}.{name.data}"))
    else:
        s.stack.append(_OTHER)


def _inst(s: _State, op: Op) -> None:
    args = s.pop_mark(op)
    _global(s, op)
    s.stack.append(_result_of(s.pop(op), Val("tuple", tuple(args))))


def _obj(s: _State, op: Op) -> None:
    items = s.pop_mark(op)
    if not items:
        raise BrokenStream("OBJ without a class", op.pos)
    s.stack.append(_result_of(items[0], Val("tuple", tuple(items[1:]))))


def _reduce(s: _State, op: Op) -> None:
    args = s.pop(op)
    s.stack.append(_result_of(s.pop(op), args))


def _newobj_ex(s: _State, op: Op) -> None:
    s.pop(op)
    _reduce(s, op)


def _build(s: _State, op: Op) -> None:
    s.pop(op)
    if not s.stack:
        raise BrokenStream("BUILD on an empty stack", op.pos)


def _binpersid(s: _State, op: Op) -> None:
    s.stack.append(s.persistent(s.pop(op), op))


def _persid(s: _State, op: Op) -> None:
    s.stack.append(Val("storage"))


def _setitem(s: _State, op: Op) -> None:
    s.pop(op)
    s.pop(op)
    if not s.stack:
        raise BrokenStream("SETITEM on an empty stack", op.pos)
    s.set_item(s.stack[-1], op)


def _setitems(s: _State, op: Op) -> None:
    s.pop_mark(op)
    if not s.stack:
        raise BrokenStream("SETITEMS on an empty stack", op.pos)
    s.set_item(s.stack[-1], op)


def _append(s: _State, op: Op) -> None:
    s.pop(op)
    if not s.stack:
        raise BrokenStream("APPEND on an empty stack", op.pos)


def _appends(s: _State, op: Op) -> None:
    s.pop_mark(op)
    if not s.stack:
        raise BrokenStream("APPENDS on an empty stack", op.pos)


def _put(s: _State, op: Op) -> None:
    if not s.stack:
        raise BrokenStream(f"{op.name} on an empty stack", op.pos)
    s.memo[op.arg] = s.stack[-1]


def _memoize(s: _State, op: Op) -> None:
    if not s.stack:
        raise BrokenStream("MEMOIZE on an empty stack", op.pos)
    s.memo[len(s.memo)] = s.stack[-1]


def _get(s: _State, op: Op) -> None:
    if op.arg not in s.memo:
        raise BrokenStream(f"memo key {op.arg} not found", op.pos)
    s.stack.append(s.memo[op.arg])


def _pop(s: _State, op: Op) -> None:
    if s.stack:
        s.stack.pop()
    else:
        s.pop_mark(op)


def _dup(s: _State, op: Op) -> None:
    s.stack.append(s.pop(op))
    s.stack.append(s.stack[-1])


def _ignore(s: _State, op: Op) -> None:
    return None


_STRING_OPS = ("STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8")
_HANDLERS: dict[str, _Handler] = {
    **{name: _const for name in _STRING_OPS},
    "MARK": _mark, "EMPTY_DICT": _push("dict"), "EMPTY_LIST": _push("list"), "EMPTY_TUPLE": _push("tuple"),
    "DICT": _from_mark("dict"), "LIST": _from_mark("list"), "TUPLE": _from_mark("tuple"),
    "TUPLE1": _tuple_n(1), "TUPLE2": _tuple_n(2), "TUPLE3": _tuple_n(3),
    "GLOBAL": _global, "STACK_GLOBAL": _stack_global, "INST": _inst, "OBJ": _obj,
    "REDUCE": _reduce, "NEWOBJ": _reduce, "NEWOBJ_EX": _newobj_ex, "BUILD": _build,
    "BINPERSID": _binpersid, "PERSID": _persid, "SETITEM": _setitem, "SETITEMS": _setitems,
    "APPEND": _append, "APPENDS": _appends,
    "PUT": _put, "BINPUT": _put, "LONG_BINPUT": _put, "MEMOIZE": _memoize,
    "GET": _get, "BINGET": _get, "LONG_BINGET": _get, "POP": _pop, "DUP": _dup,
    "PROTO": _ignore, "FRAME": _ignore,
}
