"""The opcode loop for the opcodes ordinary checkpoints are made of, parsed in place.

The analyzer's ``step`` runs one opcode the general way: ``OpReader.next_op`` builds an
``Op``, ``PickleMachine.step`` dispatches on its name, then the analyzer looks at it. That costs
several calls and an object per opcode. Here the opcodes a ``torch.save`` or ``pickle.dumps``
state dict is made of are read from the reader's window by index and applied to the machine's
stack and memo directly, with the counter in a local; an ``Op`` is built only for the opcodes
that reach an event (a call, an import, a long constant). Anything else, an opcode whose bytes
run past the window, and every case where the general path would raise (a short stack, a
missing MARK, a bad memo key, undecodable text, an over-long argument) goes to ``step`` for
that one opcode, so errors, offsets and findings are the general path's own.

The loop sees the walk through public names only: the ``WalkState``, the machine (and its
``events``, which judge what it finds) and the reader; ``step`` is handed in by the analyzer.
``_window`` stays one long function on purpose: it is the measured hot loop (docs/benchmarks.md
§8), where each call or attribute lookup per opcode shows, and ``test_fast_loop.py`` pins it
against the general path opcode for opcode.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable

from app.core.scanners.pickle_engine import calls, evaluate, nested
from app.core.scanners.pickle_engine.catalog import canonical
from app.core.scanners.pickle_engine.machine import MAX_MEMO, PickleMachine
from app.core.scanners.pickle_engine.reader import Op, OpReader
from app.core.scanners.pickle_engine.values import (
    OPAQUE,
    Call,
    Const,
    DictVal,
    GlobalRef,
    ListVal,
    TupleVal,
    Value,
)
from app.core.scanners.pickle_engine.walk_state import WalkState

_U2 = struct.Struct("<H").unpack_from
_U4 = struct.Struct("<I").unpack_from
_I4 = struct.Struct("<i").unpack_from
_U8 = struct.Struct("<Q").unpack_from
_F8 = struct.Struct(">d").unpack_from  # BINFLOAT: big-endian, as pickle writes it
# Constants and tuples are never changed once pushed: small or empty ones are shared, not built per opcode.
_SMALL_INTS = tuple(Const(i) for i in range(256))
_FIXED = {0x4E: Const(None), 0x88: Const(True), 0x89: Const(False)}
_NONE = _FIXED[0x4E]
_EMPTY_TUPLE = TupleVal(())
_SNIFF = 256  # head bytes nested.cannot_hold_pickle looks at
_LONGEST_FIXED = 8  # FRAME's length, the longest fixed-size argument (the window's last bytes go to step)

Step = Callable[[PickleMachine, OpReader], bool]  # one opcode the general way; True at STOP


def run(state: WalkState, machine: PickleMachine, reader: OpReader, step: Step) -> bool:
    """Run ``machine`` to its STOP (True), or until the joblib fork needs the general loop (False)."""
    while not state.after_fork:
        if _window(state, machine, reader):
            return True
        if step(machine, reader):  # the opcode the window could not take
            return True
    return False


def _window(state: WalkState, machine: PickleMachine, reader: OpReader) -> bool:
    """Apply the opcodes of one window; True at STOP, False when the next one needs ``step``.

    One if-chain, most frequent opcodes first; ``break`` hands the opcode at ``i`` on.
    """
    buf, first = reader.window()
    n = len(buf)
    base = reader.pos - first  # the stream offset of buf[0]
    result = state.result
    count = result.opcodes
    limit = state.limits.max_pickle_opcodes
    if n - first > limit - count:
        n = first + max(0, limit - count)  # each opcode takes a byte: past this, step raises the limit
    max_arg = reader.max_arg
    stack, memo, metastack = machine.stack, machine.memo, machine.metastack
    append = stack.append
    int_consts: dict[int, Const] = {}  # sizes and strides repeat: one constant each per window
    plain_refs: dict[Value, bool] = {}  # callables (by identity: memoized globals repeat) -> _plain_call
    i = first
    stop = n - _LONGEST_FIXED  # every fixed-size argument of an opcode before here is in the window
    try:
        while i < stop:
            code = buf[i]
            if code == 0x47:  # BINFLOAT: every float of a pickled list or dict
                append(Const(_F8(buf, i + 1)[0]))
                end = i + 9
            elif code == 0x4E:  # NONE, the other value of lists of floats
                append(_NONE)
                end = i + 1
            elif code == 0x72 or code == 0x71:  # LONG_BINPUT, BINPUT
                if code == 0x72:
                    index, end = _U4(buf, i + 1)[0], i + 5
                else:
                    index, end = buf[i + 1], i + 2
                if not stack:
                    break
                if len(memo) < MAX_MEMO or index in memo:
                    memo[index] = stack[-1]
                else:
                    machine.memo_overflow = True
            elif code == 0x4B:  # BININT1
                append(_SMALL_INTS[buf[i + 1]])
                end = i + 2
            elif code == 0x68:  # BINGET
                value = memo.get(buf[i + 1])
                if value is None:
                    if not machine.memo_overflow:
                        break
                    value = OPAQUE
                append(value)
                end = i + 2
            elif code == 0x94:  # MEMOIZE
                if not stack:
                    break
                index = len(memo)
                if index < MAX_MEMO or index in memo:
                    memo[index] = stack[-1]
                else:
                    machine.memo_overflow = True
                end = i + 1
            elif code == 0x28:  # MARK
                metastack.append(stack)
                stack = machine.stack = []
                append = stack.append
                end = i + 1
            elif code == 0x58 or code == 0x8C:  # BINUNICODE, SHORT_BINUNICODE
                if code == 0x58:
                    length, start = _U4(buf, i + 1)[0], i + 5
                else:
                    length, start = buf[i + 1], i + 2
                end = start + length
                if end > n or length > max_arg:
                    break
                try:
                    text = buf[start:end].decode("utf-8", "surrogatepass")
                except UnicodeDecodeError:
                    break
                append(Const(text))
                # Shorter text cannot hold a pickle; ASCII text is its own latin-1 bytes (load_events.as_bytes).
                if len(text) >= nested.MIN_BYTES and not (
                        text.isascii() and nested.cannot_hold_pickle(buf[start : min(end, start + _SNIFF)])):
                    result.opcodes = count + 1
                    name = "BINUNICODE" if code == 0x58 else "SHORT_BINUNICODE"
                    machine.events.on_constant(Op(name, text, base + i), reader)
            elif code == 0x52:  # REDUCE
                if len(stack) < 2:
                    break
                args = stack.pop()
                func = stack.pop()
                plain = plain_refs.get(func)
                if plain is None:
                    plain = plain_refs[func] = type(func) is GlobalRef and _plain_call(func.module, func.name)
                if plain and (args is _EMPTY_TUPLE or not calls.holds_unsafe_global(args)):
                    append(Call(func, args, opcode="REDUCE"))  # what machine.call returns; nothing to report
                else:
                    result.opcodes = count + 1
                    op = Op("REDUCE", None, base + i)
                    append(machine.call(func, args, op))
                    machine.events.on_computed(op, stack[-1])
                end = i + 1
            elif code == 0x74:  # TUPLE
                if not metastack:
                    break
                items = tuple(stack)
                stack = machine.stack = metastack.pop()
                append = stack.append
                append(TupleVal(items))
                end = i + 1
            elif code == 0x86:  # TUPLE2
                if len(stack) < 2:
                    break
                second = stack.pop()
                stack[-1] = TupleVal((stack[-1], second))
                end = i + 1
            elif code == 0x29:  # EMPTY_TUPLE
                append(_EMPTY_TUPLE)
                end = i + 1
            elif code == 0x4D:  # BININT2
                number = _U2(buf, i + 1)[0]
                value = int_consts.get(number)
                if value is None:
                    value = int_consts[number] = Const(number)
                append(value)
                end = i + 3
            elif code == 0x51:  # BINPERSID
                if not stack:
                    break
                stack[-1] = machine.persistent(stack[-1], base + i)
                end = i + 1
            elif code in _FIXED:  # NEWFALSE, NEWTRUE (NONE is taken above)
                append(_FIXED[code])
                end = i + 1
            elif code == 0x4A:  # BININT
                append(Const(_I4(buf, i + 1)[0]))
                end = i + 5
            elif code == 0x6A:  # LONG_BINGET
                value = memo.get(_U4(buf, i + 1)[0])
                if value is None:
                    if not machine.memo_overflow:
                        break
                    value = OPAQUE
                append(value)
                end = i + 5
            elif code == 0x85 or code == 0x87:  # TUPLE1, TUPLE3
                size = 1 if code == 0x85 else 3
                if len(stack) < size:
                    break
                items = tuple(stack[-size:])
                del stack[-size:]
                append(TupleVal(items))
                end = i + 1
            elif code == 0x8A:  # LONG1: an int beyond 32 bits (a step count, a seed, a byte offset)
                length = buf[i + 1]
                end = i + 2 + length
                if end > n or length > max_arg:
                    break
                append(Const(int.from_bytes(buf[i + 2 : end], "little", signed=True)))
            elif code == 0x7D:  # EMPTY_DICT
                append(DictVal())
                end = i + 1
            elif code == 0x5D:  # EMPTY_LIST
                append(ListVal())
                end = i + 1
            elif code == 0x75:  # SETITEMS
                if not metastack or len(stack) % 2 or not metastack[-1]:
                    break
                items_list = stack
                stack = machine.stack = metastack.pop()
                append = stack.append
                result.opcodes = count + 1
                _setitems(machine, stack[-1], items_list, base + i)
                end = i + 1
            elif code == 0x73:  # SETITEM
                if len(stack) < 3:
                    break
                value, key = stack.pop(), stack.pop()
                result.opcodes = count + 1
                _setitem(machine, stack[-1], key, value, base + i)
                end = i + 1
            elif code == 0x65:  # APPENDS
                if not metastack or not metastack[-1]:
                    break
                items_list = stack
                stack = machine.stack = metastack.pop()
                append = stack.append
                result.opcodes = count + 1
                _add_items(machine, stack[-1], items_list, "APPENDS", base + i)
                end = i + 1
            elif code == 0x61:  # APPEND
                if len(stack) < 2:
                    break
                value = stack.pop()
                result.opcodes = count + 1
                _add_items(machine, stack[-1], [value], "APPEND", base + i)
                end = i + 1
            elif code == 0x95:  # FRAME: the pure-Python unpickler reads it whole
                end = i + 9
                state.frame_end = base + end + _U8(buf, i + 1)[0]
            elif code == 0x63:  # GLOBAL
                end = _global(state, machine, buf, i, base, max_arg, count + 1)
                if end < 0:
                    break
            elif code == 0x2E:  # STOP
                if not stack:
                    break
                machine.result = stack.pop()
                if state.depth == 0:
                    result.value = machine.result
                count += 1
                i += 1
                return True
            else:
                break
            count += 1
            i = end
        return False
    finally:
        result.opcodes = count
        reader.consume(i - first)


@functools.lru_cache(maxsize=4096)
def _plain_call(module: str, name: str) -> bool:
    """A callable ``machine.call`` neither evaluates nor reports (given no unsafe global in its arguments)."""
    return calls.keeps_nothing_callable(module, name) and canonical(module, name) not in evaluate.HELPERS


def _global(state: WalkState, machine: PickleMachine, buf: bytes, i: int, base: int, max_arg: int,
            count: int) -> int:
    """GLOBAL's two text lines, if both are in ``buf``: the end offset, or -1 for ``step``."""
    first = buf.find(b"\n", i + 1, i + 2 + max_arg)
    second = buf.find(b"\n", first + 1, first + 2 + max_arg) if first >= 0 else -1
    if second < 0:
        return -1
    try:
        module, name = buf[i + 1 : first].decode("utf-8"), buf[first + 1 : second].decode("utf-8")
    except UnicodeDecodeError:
        return -1
    state.result.opcodes = count
    ref = GlobalRef(module, name)
    machine.events.on_global(ref, Op("GLOBAL", (module, name), base + i))
    machine.stack.append(ref)
    return second + 1


def _setitems(machine: PickleMachine, target: Value, items: list[Value], pos: int) -> None:
    if not isinstance(target, DictVal):
        machine.mutate(target, TupleVal(tuple(items)), Op("SETITEMS", None, pos))
        return
    for index in range(0, len(items), 2):
        target.put(items[index], items[index + 1])


def _setitem(machine: PickleMachine, target: Value, key: Value, value: Value, pos: int) -> None:
    if isinstance(target, DictVal):
        target.put(key, value)
    else:
        machine.mutate(target, TupleVal((key, value)), Op("SETITEM", None, pos))


def _add_items(machine: PickleMachine, target: Value, items: list[Value], name: str, pos: int) -> None:
    if isinstance(target, ListVal):
        target.add(items)
    else:
        machine.mutate(target, TupleVal(tuple(items)), Op(name, None, pos))

