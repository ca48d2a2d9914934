"""Read a pickle of a torch archive the way torch's own unpicklers see it, without building anything.

What the generic engine does not model, and torch trusts:

- the storages ``persistent_load`` creates: ``('storage', <type>, key, location, numel)``
  (torch/serialization.py ``_load.persistent_load``; torch/csrc/jit/serialization/unpickler.cpp
  ``BINPERSID``), each ``numel * itemsize`` bytes over the record ``<dir>/<key>``;
- the target of ``SETITEM``/``SETITEMS`` (torch/_weights_only_unpickler.py ``load``);
- the globals, and every string (a lite-interpreter ``bytecode.pkl`` names its operators in strings).

Values are reduced to a kind (dict, list, storage, tensor, object of a class...) on the symbolic
stack of ``torch_unpickler``; this module reads the opcodes: the ones torch's picklers write parsed
in place, any other through ``OpReader``.
"""

from __future__ import annotations

import io
import struct
from typing import BinaryIO

from app.core.limits import LimitExceeded, Limits
from app.core.scanners.pickle_engine.reader import BrokenStream, OpReader
from app.core.scanners.pickle_engine.recording import replayed
from app.core.scanners.pickle_engine.torch_unpickler import (
    DICT,
    EMPTY_TUPLE,
    FALSE,
    NONE,
    OTHER,
    SMALL_INTS,
    TRUE,
    TorchPickle,
    TorchState,
    Val,
    result_of,
)

_U2, _U4, _I4 = struct.Struct("<H"), struct.Struct("<I"), struct.Struct("<i")


FAST_BYTES = 8 * 1024 * 1024  # pickles up to this size are read in memory, in one fast loop


def read_torch_pickle(stream: BinaryIO, limits: Limits) -> TorchPickle:
    """The first pickle of ``stream`` (torch reads one per record)."""
    state = TorchState(TorchPickle())
    head = stream.read(FAST_BYTES + 1)
    try:
        if len(head) <= FAST_BYTES:
            _fast_loop(state, head, limits)
        else:
            _stream_loop(state, OpReader(replayed(head, stream), limits.max_string_arg), limits)
    except (BrokenStream, LimitExceeded) as exc:
        state.out.problem = str(exc)
    return state.out


def _stream_loop(state: TorchState, reader: OpReader, limits: Limits) -> None:
    for count in range(limits.max_pickle_opcodes + 1):
        if count == limits.max_pickle_opcodes:
            raise LimitExceeded(f"more than {limits.max_pickle_opcodes} opcodes")
        op = reader.next_op()
        if op is None:
            raise BrokenStream("stream ends before STOP", reader.pos)
        if op.name == "STOP":
            state.out.complete = True
            return
        state.step(op)


def _fast_loop(state: TorchState, buf: bytes, limits: Limits) -> None:
    """The opcodes torch's picklers write, parsed in place, most frequent first (a state dict is
    mostly memo traffic, small ints and tensor rebuild tuples); any other opcode goes through OpReader."""
    stack, marks, memo, max_arg = state.stack, state.marks, state.memo, limits.max_string_arg
    pos, size, budget = 0, len(buf), limits.max_pickle_opcodes
    try:
        while True:
            budget -= 1
            if budget < 0:
                raise LimitExceeded(f"more than {limits.max_pickle_opcodes} opcodes")
            if pos >= size:
                raise BrokenStream("stream ends before STOP", pos)
            code, at = buf[pos], pos
            pos += 1
            floor = marks[-1] if marks else 0
            if code == 0x72 or code == 0x71:  # LONG_BINPUT, BINPUT
                if code == 0x72:
                    key, pos = _U4.unpack_from(buf, pos)[0], pos + 4
                else:
                    key, pos = buf[pos], pos + 1
                if len(stack) <= floor:
                    raise BrokenStream("PUT on an empty stack", at)
                memo[key] = stack[-1]
            elif code == 0x68 or code == 0x6A:  # BINGET, LONG_BINGET
                if code == 0x68:
                    key, pos = buf[pos], pos + 1
                else:
                    key, pos = _U4.unpack_from(buf, pos)[0], pos + 4
                value = memo.get(key)
                if value is None:
                    raise BrokenStream(f"memo key {key} not found", at)
                stack.append(value)
            elif code == 0x4B:  # BININT1
                stack.append(SMALL_INTS[buf[pos]])
                pos += 1
            elif code == 0x58 or code == 0x8C:  # BINUNICODE, SHORT_BINUNICODE
                if code == 0x58:
                    length, pos = _U4.unpack_from(buf, pos)[0], pos + 4
                else:
                    length, pos = buf[pos], pos + 1
                if pos + length > size:
                    raise BrokenStream("truncated string", at)
                if length > max_arg:
                    stack.append(OTHER)
                else:
                    text = _utf8(buf[pos:pos + length], at)
                    state.add_string(text)
                    stack.append(Val("const", text))
                pos += length
            elif code == 0x28:  # MARK
                marks.append(len(stack))
            elif code == 0x52 or code == 0x81:  # REDUCE, NEWOBJ
                if len(stack) - 2 < floor:
                    raise BrokenStream("REDUCE on a short stack", at)
                args = stack.pop()
                state.check_view(stack[-1], args, at)
                stack[-1] = result_of(stack[-1], args)
            elif code == 0x74:  # TUPLE
                if not marks:
                    raise BrokenStream("TUPLE without a MARK", at)
                start = marks.pop()
                items = tuple(stack[start:])
                del stack[start:]
                stack.append(Val("tuple", items))
            elif 0x85 <= code <= 0x87:  # TUPLE1..3
                n = code - 0x84
                if len(stack) - n < floor:
                    raise BrokenStream("TUPLE on a short stack", at)
                items = tuple(stack[-n:])
                del stack[-n:]
                stack.append(Val("tuple", items))
            elif code == 0x29:  # EMPTY_TUPLE
                stack.append(EMPTY_TUPLE)
            elif code == 0x51:  # BINPERSID
                if len(stack) <= floor:
                    raise BrokenStream("BINPERSID on an empty stack", at)
                stack[-1] = state.persistent(stack[-1], at)
            elif code == 0x88 or code == 0x89 or code == 0x4E:  # NEWTRUE, NEWFALSE, NONE
                stack.append(TRUE if code == 0x88 else FALSE if code == 0x89 else NONE)
            elif code == 0x4D:  # BININT2
                stack.append(Val("const", _U2.unpack_from(buf, pos)[0]))
                pos += 2
            elif code == 0x4A:  # BININT
                stack.append(Val("const", _I4.unpack_from(buf, pos)[0]))
                pos += 4
            elif code == 0x7D:  # EMPTY_DICT
                stack.append(DICT)
            elif code == 0x2E:  # STOP
                state.pop_n(1, at)
                state.out.complete = True
                return
            else:
                pos = _one_op(state, buf, at, max_arg)
    except (IndexError, struct.error):
        raise BrokenStream("truncated opcode argument", pos) from None


def _one_op(state: TorchState, buf: bytes, at: int, max_arg: int) -> int:
    """Any other opcode, parsed by OpReader; returns where the next one starts."""
    source = io.BytesIO(buf)
    source.seek(at)
    reader = OpReader(source, max_arg)
    op = reader.next_op()
    if op is None:
        raise BrokenStream("stream ends before STOP", at)
    if op.name == "STOP":
        raise BrokenStream("STOP outside the fast loop", at)  # not reached: STOP is handled inline
    state.step(op)
    return reader.pos


def _utf8(data: bytes, at: int) -> str:
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise BrokenStream("undecodable string", at) from None
