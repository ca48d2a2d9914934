"""What each pickle opcode does to the symbolic machine's stack and memo.

One small handler per opcode (constants are pushed by the machine itself); ``HANDLERS``
maps opcode names to them. Handlers go through the machine's stack primitives, which raise
``BrokenStream`` where CPython's ``_Unpickler`` would fail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from app.core.scanners.pickle_engine.reader import SKIPPED, BrokenStream, Op
from app.core.scanners.pickle_engine.values import (
    MAX_KEPT_ITEMS,
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

if TYPE_CHECKING:
    from app.core.scanners.pickle_engine.machine import PickleMachine

HIGHEST_PROTOCOL = 5


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
        m.pop_mark(op)  # CPython: POP on an empty frame discards the mark


def _dup(m: PickleMachine, op: Op) -> None:
    m.stack.append(m.top(op))


def _persid(m: PickleMachine, op: Op) -> None:
    m.stack.append(OPAQUE)


def _binpersid(m: PickleMachine, op: Op) -> None:
    m.stack.append(m.persistent(m.pop(op), op.pos))


def _global(m: PickleMachine, op: Op) -> None:
    if op.arg is SKIPPED or not isinstance(op.arg, tuple):
        m.events.on_unresolved(f"{op.name} with an over-long name", op)
        m.stack.append(OPAQUE)
        return
    ref = GlobalRef(str(op.arg[0]), str(op.arg[1]))
    m.events.on_global(ref, op)
    m.stack.append(ref)


def _inst(m: PickleMachine, op: Op) -> None:
    args = m.pop_mark(op)
    _global(m, op)
    func = m.stack.pop()
    m.stack.append(m.call(func, TupleVal(tuple(args)), op))


def _stack_global(m: PickleMachine, op: Op) -> None:
    name, module = m.pop(op), m.pop(op)
    if isinstance(module, Const) and isinstance(name, Const) and _is_str(module) and _is_str(name):
        ref = GlobalRef(str(module.value), str(name.value))
        if module.computed or name.computed:
            # Decoded at load time (rot13, hex, base64...): a plain checkpoint never does that.
            m.events.on_unresolved(f"STACK_GLOBAL of a decoded name {ref.dotted!r}", op)
        m.events.on_global(ref, op)
        m.stack.append(ref)
        return
    m.events.on_unresolved(f"STACK_GLOBAL operands {describe(module)} / {describe(name)}", op)
    m.stack.append(OPAQUE)


def _reduce(m: PickleMachine, op: Op) -> None:
    args = m.pop(op)
    func = m.pop(op)
    m.stack.append(m.call(func, args, op))


def _newobj(m: PickleMachine, op: Op) -> None:
    args = m.pop(op)
    cls = m.pop(op)
    m.stack.append(m.call(cls, args, op))


def _newobj_ex(m: PickleMachine, op: Op) -> None:
    m.pop(op)  # kwargs
    _newobj(m, op)


def _obj(m: PickleMachine, op: Op) -> None:
    items = m.pop_mark(op)
    if not items:
        raise BrokenStream("OBJ without a class", op.pos)
    m.stack.append(m.call(items[0], TupleVal(tuple(items[1:])), op))


def _build(m: PickleMachine, op: Op) -> None:
    state = m.pop(op)
    target = m.top(op)
    m.events.on_build(target, state, op)  # __setstate__, or setattr for slot state
    if isinstance(target, Call):
        target.state = state
        m.built = target


def _tuple_n(n: int) -> _Handler:
    def handler(m: PickleMachine, op: Op) -> None:
        m.stack.append(TupleVal(tuple(m.pop_n(n, op))))

    return handler


def _tuple(m: PickleMachine, op: Op) -> None:
    items = m.pop_mark(op)  # before touching m.stack: popping the mark replaces it
    m.stack.append(TupleVal(tuple(items)))


def _list(m: PickleMachine, op: Op) -> None:
    items = m.pop_mark(op)
    m.stack.append(ListVal(items[:MAX_KEPT_ITEMS]))


def _frozenset(m: PickleMachine, op: Op) -> None:
    items = m.pop_mark(op)
    m.stack.append(ListVal(items[:MAX_KEPT_ITEMS]))


def _dict(m: PickleMachine, op: Op) -> None:
    items = m.pop_mark(op)
    if len(items) % 2:
        raise BrokenStream("DICT with an odd number of items", op.pos)
    d = DictVal()
    for key, value in zip(items[::2], items[1::2], strict=True):
        d.put(key, value)
    m.stack.append(d)


def _push(factory: type[ListVal] | type[DictVal] | None) -> _Handler:  # None: an unmodelled value
    def handler(m: PickleMachine, op: Op) -> None:
        m.stack.append(factory() if factory else OPAQUE)

    return handler


def _append(m: PickleMachine, op: Op) -> None:
    value = m.pop(op)
    _add_items(m, [value], op)


def _appends(m: PickleMachine, op: Op) -> None:
    items = m.pop_mark(op)
    _add_items(m, items, op)


def _add_items(m: PickleMachine, items: list[Value], op: Op) -> None:
    target = m.top(op)
    if isinstance(target, ListVal):
        target.add(items)  # a list or set the stream built: plain data
    else:
        m.mutate(target, TupleVal(tuple(items)), op)


def _setitem(m: PickleMachine, op: Op) -> None:
    value, key = m.pop(op), m.pop(op)
    target = m.top(op)
    if isinstance(target, DictVal):
        target.put(key, value)
    else:
        m.mutate(target, TupleVal((key, value)), op)


def _setitems(m: PickleMachine, op: Op) -> None:
    items = m.pop_mark(op)
    if len(items) % 2:
        raise BrokenStream("SETITEMS with an odd number of items", op.pos)
    target = m.top(op)
    if not isinstance(target, DictVal):
        m.mutate(target, TupleVal(tuple(items)), op)
    else:
        for key, value in zip(items[::2], items[1::2], strict=True):
            target.put(key, value)


def _put(m: PickleMachine, op: Op) -> None:
    if not isinstance(op.arg, int):
        raise BrokenStream("bad memo index", op.pos)
    m.memo_put(op.arg, op)


def _memoize(m: PickleMachine, op: Op) -> None:
    m.memo_put(len(m.memo), op)


def _get(m: PickleMachine, op: Op) -> None:
    m.memo_get(op.arg, op)


def _ext(m: PickleMachine, op: Op) -> None:
    # The extension registry maps a number to a global chosen by the loading process.
    m.events.on_unresolved(f"{op.name} extension code {op.arg}", op)
    m.stack.append(OPAQUE)


def _pop_mark(m: PickleMachine, op: Op) -> None:
    m.pop_mark(op)


def _is_str(value: Value) -> bool:
    return isinstance(value, Const) and isinstance(value.value, str)


class _Handler(Protocol):
    def __call__(self, m: PickleMachine, op: Op, /) -> None: ...


HANDLERS: dict[str, _Handler] = {
    "PROTO": _proto, "MARK": _mark, "POP": _pop, "POP_MARK": _pop_mark, "DUP": _dup,
    "PERSID": _persid, "BINPERSID": _binpersid,
    "GLOBAL": _global, "INST": _inst, "STACK_GLOBAL": _stack_global,
    "REDUCE": _reduce, "NEWOBJ": _newobj, "NEWOBJ_EX": _newobj_ex, "OBJ": _obj, "BUILD": _build,
    "EMPTY_TUPLE": _tuple_n(0), "TUPLE1": _tuple_n(1), "TUPLE2": _tuple_n(2), "TUPLE3": _tuple_n(3),
    "TUPLE": _tuple, "LIST": _list, "EMPTY_LIST": _push(ListVal), "DICT": _dict,
    "EMPTY_DICT": _push(DictVal), "EMPTY_SET": _push(ListVal), "FROZENSET": _frozenset,
    "APPEND": _append, "APPENDS": _appends, "SETITEM": _setitem, "SETITEMS": _setitems,
    "ADDITEMS": _appends,
    "PUT": _put, "BINPUT": _put, "LONG_BINPUT": _put, "MEMOIZE": _memoize,
    "GET": _get, "BINGET": _get, "LONG_BINGET": _get,
    "EXT1": _ext, "EXT2": _ext, "EXT4": _ext, "NEXT_BUFFER": _push(None),
}
