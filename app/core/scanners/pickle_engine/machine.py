"""A symbolic pickle machine: the unpickler's stack and memo, with values replaced by
just enough structure to resolve imports (STACK_GLOBAL operands through the memo) and to
see what is called or mutated. It mirrors CPython's ``_Unpickler`` stack discipline, so a
stream it calls broken is one the real unpickler would also reject at the same opcode.
"""

from __future__ import annotations

from typing import Protocol

from app.core.scanners.pickle_engine.catalog import canonical
from app.core.scanners.pickle_engine.evaluate import EvalBudget, evaluate
from app.core.scanners.pickle_engine.opcodes import HANDLERS
from app.core.scanners.pickle_engine.reader import SKIPPED, BrokenStream, Op, OpReader
from app.core.scanners.pickle_engine.values import OPAQUE, PERSISTENT, Call, Const, GlobalRef, Value

MAX_MEMO = 1_000_000  # beyond this, memo values are not kept (GET yields an opaque value)


class Events(Protocol):
    """What a walk is told. The machine's opcode handlers report imports, calls, mutations, BUILDs
    and persistent ids; the opcode loops that drive the machine report the constants it pushed
    (``on_constant``) and computed (``on_computed``), which may hold pickles of their own."""

    def on_global(self, ref: GlobalRef, op: Op) -> None: ...

    def on_unresolved(self, detail: str, op: Op) -> None: ...

    def on_call(self, func: Value, args: Value, op: Op) -> None: ...

    def on_mutation(self, target: Value, values: Value, op: Op) -> None: ...

    def on_build(self, target: Value, state: Value, op: Op) -> None: ...

    def on_persistent(self, pid: Value, pos: int) -> None: ...

    def on_constant(self, op: Op, reader: OpReader) -> None: ...

    def on_computed(self, op: Op, top: Value) -> None: ...


_CONST_OPS = frozenset(
    {
        "FLOAT", "INT", "BININT", "BININT1", "LONG", "BININT2", "STRING", "BINSTRING", "SHORT_BINSTRING",
        "UNICODE", "BINUNICODE", "BINFLOAT", "LONG1", "LONG4", "BINBYTES", "SHORT_BINBYTES",
        "SHORT_BINUNICODE", "BINUNICODE8", "BINBYTES8", "BYTEARRAY8",
    }
)
_FIXED_CONSTS = {"NONE": None, "NEWTRUE": True, "NEWFALSE": False}
_IGNORED = frozenset({"FRAME", "READONLY_BUFFER"})


class PickleMachine:
    """Runs one pickle (up to STOP); ``step`` returns True at STOP."""

    def __init__(self, events: Events) -> None:
        self.events = events
        self.stack: list[Value] = []
        self.metastack: list[list[Value]] = []
        self.memo: dict[int, Value] = {}
        self.memo_overflow = False
        self.built: Call | None = None  # the instance the last BUILD applied state to
        self.result: Value | None = None  # what the pickle returns (the value under STOP)
        self.evaluation = EvalBudget()  # what this stream's pure helpers may still produce

    def step(self, op: Op) -> bool:
        self.built = None
        name = op.name
        if name in _CONST_OPS:
            self.stack.append(OPAQUE if op.arg is SKIPPED else Const(op.arg))
        elif name in _FIXED_CONSTS:
            self.stack.append(Const(_FIXED_CONSTS[name]))
        elif name == "STOP":
            self.result = self.pop(op)
            return True
        elif name not in _IGNORED:
            handler = HANDLERS.get(name)
            if handler is None:
                raise BrokenStream(f"unsupported opcode {name}", op.pos)
            handler(self, op)
        return False

    # -- stack primitives for the opcode handlers, with the real unpickler's failure points
    def pop(self, op: Op) -> Value:
        if not self.stack:
            raise BrokenStream(f"{op.name} on an empty stack", op.pos)
        return self.stack.pop()

    def top(self, op: Op) -> Value:
        if not self.stack:
            raise BrokenStream(f"{op.name} on an empty stack", op.pos)
        return self.stack[-1]

    def pop_mark(self, op: Op) -> list[Value]:
        if not self.metastack:
            raise BrokenStream(f"{op.name} without a MARK", op.pos)
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def pop_n(self, n: int, op: Op) -> list[Value]:
        if len(self.stack) < n:
            raise BrokenStream(f"{op.name} on a short stack", op.pos)
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    def memo_put(self, index: int, op: Op) -> None:
        if index < 0:
            raise BrokenStream("negative memo index", op.pos)
        value = self.top(op)
        if index in self.memo or len(self.memo) < MAX_MEMO:
            self.memo[index] = value
        else:
            self.memo_overflow = True

    def memo_get(self, index: object, op: Op) -> None:
        if not isinstance(index, int):
            raise BrokenStream("bad memo index", op.pos)
        value = self.memo.get(index)
        if value is None:
            if not self.memo_overflow:
                raise BrokenStream(f"memo key {index} not found", op.pos)
            value = OPAQUE
        self.stack.append(value)

    def persistent(self, pid: Value, pos: int) -> Value:
        """BINPERSID: what persistent_load returns for ``pid`` (torch: a storage)."""
        self.events.on_persistent(pid, pos)
        return PERSISTENT

    def mutate(self, target: Value, values: Value, op: Op) -> None:
        self.events.on_mutation(target, values, op)

    def call(self, func: Value, args: Value, op: Op) -> Value:
        self.events.on_call(func, args, op)
        if isinstance(func, GlobalRef):
            result = evaluate(canonical(func.module, func.name), args, self.evaluation)
            if result is not None:
                return result  # a pure helper on constants: its result is a constant too
        return Call(func, args, opcode=op.name)
