"""The symbolic stack of torch's unpicklers (``torch_pickle`` drives it): what each opcode does to
a stack of values reduced to a kind (dict, list, storage, tensor, object of a class...), and what
torch trusts a pickle for, collected in a ``TorchPickle``. Opcodes this module does not follow
move the stack as ``pickletools`` documents them.
"""

from __future__ import annotations

import functools
import pickletools
from collections.abc import Callable
from dataclasses import dataclass, field

from app.core.scanners.pickle_engine.reader import SKIPPED, BrokenStream, Op
from app.core.scanners.pickle_engine.torch_trust import TENSOR_PREFIXES, StorageRef

# Classes whose instances are dicts: the only SETITEM(S) targets torch >= 2.10 accepts
# (_weights_only_unpickler._check_set_item_target: dict, OrderedDict, Counter), plus
# defaultdict, a dict whose factory the generic engine judges.
DICT_CLASSES = frozenset({"builtins.dict", "collections.OrderedDict", "collections.Counter",
                          "collections.defaultdict", "__builtin__.dict"})
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
    data: object = None  # const: the value; tuple: items; global/object: the dotted name; storage: its numel


OTHER = Val("other")


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
    view_faults: list[str] = field(default_factory=list)  # tensors whose view reaches past their storage
    strings: list[str] = field(default_factory=list)
    complete: bool = False  # read up to STOP with nothing it could not follow
    problem: str = ""  # why not complete


class TorchState:
    def __init__(self, out: TorchPickle) -> None:
        self.out = out
        self.stack: list[Val] = []
        self.marks: list[int] = []  # where each open MARK's frame starts in ``stack``
        self.memo: dict[object, Val] = {}
        self._seen: set[str] = set()

    # -- stack primitives, failing where CPython's unpickler fails (the frame above the last MARK)
    def _floor(self) -> int:
        return self.marks[-1] if self.marks else 0

    def top(self, at: int) -> Val:
        if len(self.stack) <= self._floor():
            raise BrokenStream("opcode on an empty stack", at)
        return self.stack[-1]

    def pop_n(self, n: int, at: int) -> list[Val]:
        if len(self.stack) - n < self._floor():
            raise BrokenStream("opcode on a short stack", at)
        items = self.stack[len(self.stack) - n:]
        del self.stack[len(self.stack) - n:]
        return items

    def pop(self, op: Op) -> Val:
        return self.pop_n(1, op.pos)[0]

    def pop_mark(self, at: int) -> list[Val]:
        if not self.marks:
            raise BrokenStream("opcode without a MARK", at)
        start = self.marks.pop()
        items = self.stack[start:]
        del self.stack[start:]
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
            self.pop_mark(op.pos)
            before = before[: before.index("mark")]
        self.pop_n(len(before), op.pos)
        after = [s.name for s in spec.stack_after]
        for kind in after:
            self.stack.append(Val("const", op.arg) if kind in _CONST_KINDS and op.arg is not SKIPPED else OTHER)

    # -- what torch trusts
    def add_global(self, dotted: str) -> Val:
        if dotted not in self._seen:
            self._seen.add(dotted)
            self.out.globals.append(dotted)
        return Val("global", dotted)

    def add_string(self, value: object) -> None:
        if isinstance(value, str) and len(self.out.strings) < _MAX_STRINGS:
            self.out.strings.append(value)

    def persistent(self, pid: Val, at: int) -> Val:
        items = pid.data if pid.kind == "tuple" and isinstance(pid.data, tuple) else ()
        values = [v.data if v.kind in ("const", "global") else None for v in items]
        if len(values) >= 5 and values[0] == "storage" and isinstance(values[1], str) \
                and isinstance(values[2], str) and isinstance(values[4], int) and not isinstance(values[4], bool):
            self.out.storages.append(StorageRef(values[2], values[1].rsplit(".", 1)[-1], values[4], at))
            return Val("storage", values[4])  # its element count, for the views built over it
        return _STORAGE

    def check_view(self, func: Val, args: Val, at: int) -> None:
        """unpickler.cpp rebuildTensor: ``set_sizes_and_strides`` over the storage, with no bounds check
        (torch._utils._rebuild_tensor's ``set_`` checks; the TorchScript unpickler does not)."""
        if func.kind != "global" or func.data not in _VIEW_REBUILDS or args.kind != "tuple":
            return
        items = args.data if isinstance(args.data, tuple) else ()
        if len(items) < 4 or items[0].kind != "storage" or not isinstance(items[0].data, int):
            return
        offset, sizes, strides = _int(items[1]), _ints(items[2]), _ints(items[3])
        if offset is None or sizes is None or strides is None or len(sizes) != len(strides):
            return
        numel = items[0].data
        extent = 0 if 0 in sizes else offset + 1 + sum((n - 1) * st for n, st in zip(sizes, strides, strict=True))
        if (offset < 0 or any(n < 0 or st < 0 for n, st in zip(sizes, strides, strict=True)) or extent > numel) \
                and len(self.out.view_faults) < 20:
            self.out.view_faults.append(f"offset {offset}, sizes {tuple(sizes)}, strides {tuple(strides)} reach "
                                        f"element {extent} of a {numel}-element storage (at offset {at})")

    def set_item(self, target: Val, opcode: str, at: int) -> None:
        fault = _non_dict(target)
        if fault is not None:
            self.out.setitem_faults.append(SetItemOnNonDict(opcode, fault, at))


_VIEW_REBUILDS = frozenset({"torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_qtensor"})


def _int(value: Val) -> int | None:
    return value.data if value.kind == "const" and type(value.data) is int else None


def _ints(value: Val) -> list[int] | None:
    if value.kind != "tuple" or not isinstance(value.data, tuple):
        return None
    found = [_int(v) for v in value.data]
    return None if any(v is None for v in found) else [v for v in found if v is not None]


def _non_dict(target: Val) -> str | None:
    """What the target is when it is known not to be a dict (None: a dict, or unknown)."""
    if target.kind in ("dict", "other"):
        return None
    if target.kind == "object":
        return None  # an instance of a dict subclass takes items (protocol 2: NEWOBJ, then SETITEMS)
    return {"list": "a list", "tuple": "a tuple", "const": "a constant", "storage": "a storage",
            "tensor": "a tensor", "global": f"the imported {target.data}"}.get(target.kind, target.kind)


def result_of(func: Val, args: Val) -> Val:
    """What calling ``func`` (REDUCE, NEWOBJ) pushes, as far as torch's loaders make it."""
    if func.kind != "global":
        return OTHER
    name = str(func.data)
    module, _, short = name.rpartition(".")
    if module == "torch.jit._pickle" and short in _JIT_LIST_BUILDERS:
        items = args.data if args.kind == "tuple" and isinstance(args.data, tuple) else ()
        return items[0] if items else OTHER
    return _instance_of(name)


@functools.lru_cache(maxsize=1024)
def _instance_of(name: str) -> Val:
    if name in DICT_CLASSES:
        return Val("dict")
    if name.startswith(TENSOR_PREFIXES):
        return _TENSOR
    return Val("object", name)


_Handler = Callable[["TorchState", Op], None]
EMPTY_TUPLE, DICT, _STORAGE = Val("tuple", ()), Val("dict"), Val("storage")
TRUE, FALSE, NONE = Val("const", True), Val("const", False), Val("const", None)
SMALL_INTS = tuple(Val("const", i) for i in range(256))
_TENSOR = Val("tensor")


def _const(s: TorchState, op: Op) -> None:
    s.add_string(op.arg)
    s.stack.append(OTHER if op.arg is SKIPPED else Val("const", op.arg))


def _mark(s: TorchState, op: Op) -> None:
    s.marks.append(len(s.stack))


def _push(kind: str) -> _Handler:
    value = Val(kind, ()) if kind == "tuple" else Val(kind)

    def handle(s: TorchState, op: Op) -> None:
        s.stack.append(value)

    return handle


def _from_mark(kind: str) -> _Handler:
    def handle(s: TorchState, op: Op) -> None:
        items = s.pop_mark(op.pos)
        s.stack.append(Val(kind, tuple(items)) if kind == "tuple" else Val(kind))

    return handle


def _tuple_n(n: int) -> _Handler:
    def handle(s: TorchState, op: Op) -> None:
        s.stack.append(Val("tuple", tuple(s.pop_n(n, op.pos))))

    return handle


def _global(s: TorchState, op: Op) -> None:
    if isinstance(op.arg, tuple):
        s.stack.append(s.add_global(f"{op.arg[0]}.{op.arg[1]}"))
    else:
        s.stack.append(OTHER)


def _stack_global(s: TorchState, op: Op) -> None:
    module, name = s.pop_n(2, op.pos)
    if module.kind == "const" and name.kind == "const" and isinstance(module.data, str) \
            and isinstance(name.data, str):
        s.stack.append(s.add_global(f"{module.data}.{name.data}"))
    else:
        s.stack.append(OTHER)


def _inst(s: TorchState, op: Op) -> None:
    args = s.pop_mark(op.pos)
    _global(s, op)
    s.stack.append(result_of(s.pop(op), Val("tuple", tuple(args))))


def _obj(s: TorchState, op: Op) -> None:
    items = s.pop_mark(op.pos)
    if not items:
        raise BrokenStream("OBJ without a class", op.pos)
    s.stack.append(result_of(items[0], Val("tuple", tuple(items[1:]))))


def _reduce(s: TorchState, op: Op) -> None:
    func, args = s.pop_n(2, op.pos)
    s.check_view(func, args, op.pos)
    s.stack.append(result_of(func, args))


def _newobj_ex(s: TorchState, op: Op) -> None:
    cls, args, _ = s.pop_n(3, op.pos)
    s.stack.append(result_of(cls, args))


def _build(s: TorchState, op: Op) -> None:
    s.pop(op)
    s.top(op.pos)


def _binpersid(s: TorchState, op: Op) -> None:
    s.stack.append(s.persistent(s.pop(op), op.pos))


def _persid(s: TorchState, op: Op) -> None:
    s.stack.append(_STORAGE)


def _setitem(s: TorchState, op: Op) -> None:
    s.pop_n(2, op.pos)
    s.set_item(s.top(op.pos), op.name, op.pos)


def _setitems(s: TorchState, op: Op) -> None:
    s.pop_mark(op.pos)
    s.set_item(s.top(op.pos), op.name, op.pos)


def _append(s: TorchState, op: Op) -> None:
    s.pop(op)
    s.top(op.pos)


def _appends(s: TorchState, op: Op) -> None:
    s.pop_mark(op.pos)
    s.top(op.pos)


def _put(s: TorchState, op: Op) -> None:
    s.memo[op.arg] = s.top(op.pos)


def _memoize(s: TorchState, op: Op) -> None:
    s.memo[len(s.memo)] = s.top(op.pos)


def _get(s: TorchState, op: Op) -> None:
    if op.arg not in s.memo:
        raise BrokenStream(f"memo key {op.arg} not found", op.pos)
    s.stack.append(s.memo[op.arg])


def _pop(s: TorchState, op: Op) -> None:
    if len(s.stack) > s._floor():
        s.stack.pop()
    else:
        s.pop_mark(op.pos)  # CPython: POP on an empty frame discards the mark


def _dup(s: TorchState, op: Op) -> None:
    s.stack.append(s.top(op.pos))


def _ignore(s: TorchState, op: Op) -> None:
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
