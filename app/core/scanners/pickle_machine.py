"""A symbolic pickle machine: the unpickler's stack and memo, with values replaced by
just enough structure to resolve imports (STACK_GLOBAL operands through the memo) and to
see what is called or mutated. It mirrors CPython's ``_Unpickler`` stack discipline, so a
stream it calls broken is one the real unpickler would also reject at the same opcode.
"""

from __future__ import annotations

from typing import Protocol

from app.core.scanners.pickle_reader import SKIPPED, BrokenStream, Op
from app.core.scanners.pickle_values import (
    OPAQUE,
    Call,
    Const,
    DictVal,
    GlobalRef,
    ListVal,
    TupleVal,
    Value,
    describe,
)

MAX_MEMO = 1_000_000  # beyond this, memo values are not kept (GET yields an opaque value)


class Events(Protocol):
    def on_global(self, ref: GlobalRef, op: Op) -> None: ...

    def on_unresolved(self, detail: str, op: Op) -> None: ...

    def on_call(self, func: Value, args: Value, op: Op) -> None: ...

    def on_mutation(self, target: GlobalRef, op: Op) -> None: ...


_CONST_OPS = frozenset(
    {
        "FLOAT", "INT", "BININT", "BININT1", "LONG", "BININT2", "STRING", "BINSTRING", "SHORT_BINSTRING",
        "UNICODE", "BINUNICODE", "BINFLOAT", "LONG1", "LONG4", "BINBYTES", "SHORT_BINBYTES",
        "SHORT_BINUNICODE", "BINUNICODE8", "BINBYTES8", "BYTEARRAY8",
    }
)
_FIXED_CONSTS = {"NONE": None, "NEWTRUE": True, "NEWFALSE": False}
_IGNORED = frozenset({"FRAME", "READONLY_BUFFER"})
HIGHEST_PROTOCOL = 5


class PickleMachine:
    """Runs one pickle (up to STOP); ``step`` returns True at STOP."""

    def __init__(self, events: Events) -> None:
        self.events = events
        self.stack: list[Value] = []
        self.metastack: list[list[Value]] = []
        self.memo: dict[int, Value] = {}
        self.memo_overflow = False
        self.built: Call | None = None  # the instance the last BUILD applied state to

    def step(self, op: Op) -> bool:
        self.built = None
        name = op.name
        if name in _CONST_OPS:
            self.stack.append(OPAQUE if op.arg is SKIPPED else Const(op.arg))
        elif name in _FIXED_CONSTS:
            self.stack.append(Const(_FIXED_CONSTS[name]))
        elif name == "STOP":
            self._pop(op)
            return True
        elif name not in _IGNORED:
            handler = _HANDLERS.get(name)
            if handler is None:
                raise BrokenStream(f"unsupported opcode {name}", op.pos)
            handler(self, op)
        return False

    # -- stack primitives, with the real unpickler's failure points
    def _pop(self, op: Op) -> Value:
        if not self.stack:
            raise BrokenStream(f"{op.name} on an empty stack", op.pos)
        return self.stack.pop()

    def _top(self, op: Op) -> Value:
        if not self.stack:
            raise BrokenStream(f"{op.name} on an empty stack", op.pos)
        return self.stack[-1]

    def _pop_mark(self, op: Op) -> list[Value]:
        if not self.metastack:
            raise BrokenStream(f"{op.name} without a MARK", op.pos)
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _pop_n(self, n: int, op: Op) -> list[Value]:
        if len(self.stack) < n:
            raise BrokenStream(f"{op.name} on a short stack", op.pos)
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    def _memo_put(self, index: int, op: Op) -> None:
        if index < 0:
            raise BrokenStream("negative memo index", op.pos)
        value = self._top(op)
        if index in self.memo or len(self.memo) < MAX_MEMO:
            self.memo[index] = value
        else:
            self.memo_overflow = True

    def _memo_get(self, index: object, op: Op) -> None:
        if not isinstance(index, int):
            raise BrokenStream("bad memo index", op.pos)
        value = self.memo.get(index)
        if value is None:
            if not self.memo_overflow:
                raise BrokenStream(f"memo key {index} not found", op.pos)
            value = OPAQUE
        self.stack.append(value)

    def _mutate(self, target: Value, op: Op) -> None:
        if isinstance(target, GlobalRef):
            self.events.on_mutation(target, op)

    def _call(self, func: Value, args: Value, op: Op) -> Call:
        self.events.on_call(func, args, op)
        return Call(func, args)


def _proto(m: PickleMachine, op: Op) -> None:
    if not isinstance(op.arg, int) or op.arg > HIGHEST_PROTOCOL:
        raise BrokenStream(f"unsupported pickle protocol {op.arg}", op.pos)


def _mark(m: PickleMachine, op: Op) -> None:
    m.metastack.append(m.stack)
    m.stack = []


def _pop(m: PickleMachine, op: Op) -> None:
    if m.stack:
        m.stack.pop()
    else:
        m._pop_mark(op)  # CPython: POP on an empty frame discards the mark


def _dup(m: PickleMachine, op: Op) -> None:
    m.stack.append(m._top(op))


def _persid(m: PickleMachine, op: Op) -> None:
    m.stack.append(OPAQUE)


def _binpersid(m: PickleMachine, op: Op) -> None:
    m._pop(op)
    m.stack.append(OPAQUE)


def _global(m: PickleMachine, op: Op) -> None:
    if op.arg is SKIPPED or not isinstance(op.arg, tuple):
        m.events.on_unresolved(f"{op.name} with an over-long name", op)
        m.stack.append(OPAQUE)
        return
    ref = GlobalRef(str(op.arg[0]), str(op.arg[1]))
    m.events.on_global(ref, op)
    m.stack.append(ref)


def _inst(m: PickleMachine, op: Op) -> None:
    args = m._pop_mark(op)
    _global(m, op)
    func = m.stack.pop()
    m.stack.append(m._call(func, TupleVal(tuple(args)), op))


def _stack_global(m: PickleMachine, op: Op) -> None:
    name, module = m._pop(op), m._pop(op)
    if isinstance(module, Const) and isinstance(name, Const) and _is_str(module) and _is_str(name):
        ref = GlobalRef(str(module.value), str(name.value))
        m.events.on_global(ref, op)
        m.stack.append(ref)
        return
    m.events.on_unresolved(f"STACK_GLOBAL operands {describe(module)} / {describe(name)}", op)
    m.stack.append(OPAQUE)


def _reduce(m: PickleMachine, op: Op) -> None:
    args = m._pop(op)
    func = m._pop(op)
    m.stack.append(m._call(func, args, op))


def _newobj(m: PickleMachine, op: Op) -> None:
    args = m._pop(op)
    cls = m._pop(op)
    m.stack.append(m._call(cls, args, op))


def _newobj_ex(m: PickleMachine, op: Op) -> None:
    m._pop(op)  # kwargs
    _newobj(m, op)


def _obj(m: PickleMachine, op: Op) -> None:
    items = m._pop_mark(op)
    if not items:
        raise BrokenStream("OBJ without a class", op.pos)
    m.stack.append(m._call(items[0], TupleVal(tuple(items[1:])), op))


def _build(m: PickleMachine, op: Op) -> None:
    state = m._pop(op)
    target = m._top(op)
    m._mutate(target, op)
    if isinstance(target, Call):
        target.state = state
        m.built = target


def _tuple_n(n: int) -> _Handler:
    def handler(m: PickleMachine, op: Op) -> None:
        m.stack.append(TupleVal(tuple(m._pop_n(n, op))))

    return handler


def _tuple(m: PickleMachine, op: Op) -> None:
    items = m._pop_mark(op)  # before touching m.stack: popping the mark replaces it
    m.stack.append(TupleVal(tuple(items)))


def _list(m: PickleMachine, op: Op) -> None:
    m._pop_mark(op)
    m.stack.append(ListVal())


def _dict(m: PickleMachine, op: Op) -> None:
    items = m._pop_mark(op)
    if len(items) % 2:
        raise BrokenStream("DICT with an odd number of items", op.pos)
    d = DictVal()
    for key, value in zip(items[::2], items[1::2], strict=True):
        d.put(key, value)
    m.stack.append(d)


def _push(factory: type[ListVal] | type[DictVal] | None) -> _Handler:
    def handler(m: PickleMachine, op: Op) -> None:
        m.stack.append(factory() if factory else OPAQUE)

    return handler


def _append(m: PickleMachine, op: Op) -> None:
    m._pop(op)
    m._mutate(m._top(op), op)


def _appends(m: PickleMachine, op: Op) -> None:
    m._pop_mark(op)
    m._mutate(m._top(op), op)


def _setitem(m: PickleMachine, op: Op) -> None:
    value, key = m._pop(op), m._pop(op)
    target = m._top(op)
    m._mutate(target, op)
    if isinstance(target, DictVal):
        target.put(key, value)


def _setitems(m: PickleMachine, op: Op) -> None:
    items = m._pop_mark(op)
    if len(items) % 2:
        raise BrokenStream("SETITEMS with an odd number of items", op.pos)
    target = m._top(op)
    m._mutate(target, op)
    if isinstance(target, DictVal):
        for key, value in zip(items[::2], items[1::2], strict=True):
            target.put(key, value)


def _frozenset(m: PickleMachine, op: Op) -> None:
    m._pop_mark(op)
    m.stack.append(OPAQUE)


def _put(m: PickleMachine, op: Op) -> None:
    if not isinstance(op.arg, int):
        raise BrokenStream("bad memo index", op.pos)
    m._memo_put(op.arg, op)


def _memoize(m: PickleMachine, op: Op) -> None:
    m._memo_put(len(m.memo), op)


def _get(m: PickleMachine, op: Op) -> None:
    m._memo_get(op.arg, op)


def _ext(m: PickleMachine, op: Op) -> None:
    # The extension registry maps a number to a global chosen by the loading process.
    m.events.on_unresolved(f"{op.name} extension code {op.arg}", op)
    m.stack.append(OPAQUE)


def _pop_mark(m: PickleMachine, op: Op) -> None:
    m._pop_mark(op)


def _is_str(value: Value) -> bool:
    return isinstance(value, Const) and isinstance(value.value, str)


class _Handler(Protocol):
    def __call__(self, m: PickleMachine, op: Op, /) -> None: ...


_HANDLERS: dict[str, _Handler] = {
    "PROTO": _proto, "MARK": _mark, "POP": _pop, "POP_MARK": _pop_mark, "DUP": _dup,
    "PERSID": _persid, "BINPERSID": _binpersid,
    "GLOBAL": _global, "INST": _inst, "STACK_GLOBAL": _stack_global,
    "REDUCE": _reduce, "NEWOBJ": _newobj, "NEWOBJ_EX": _newobj_ex, "OBJ": _obj, "BUILD": _build,
    "EMPTY_TUPLE": _tuple_n(0), "TUPLE1": _tuple_n(1), "TUPLE2": _tuple_n(2), "TUPLE3": _tuple_n(3),
    "TUPLE": _tuple, "LIST": _list, "EMPTY_LIST": _push(ListVal), "DICT": _dict,
    "EMPTY_DICT": _push(DictVal), "EMPTY_SET": _push(None), "FROZENSET": _frozenset,
    "APPEND": _append, "APPENDS": _appends, "SETITEM": _setitem, "SETITEMS": _setitems,
    "ADDITEMS": _appends,
    "PUT": _put, "BINPUT": _put, "LONG_BINPUT": _put, "MEMOIZE": _memoize,
    "GET": _get, "BINGET": _get, "LONG_BINGET": _get,
    "EXT1": _ext, "EXT2": _ext, "EXT4": _ext, "NEXT_BUFFER": _push(None),
}
