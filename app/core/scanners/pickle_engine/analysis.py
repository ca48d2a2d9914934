"""hfvet's own pickle analysis: walk every opcode of every stacked pickle in a stream and
report what a loader would import, call or mutate. Nothing is ever unpickled.

This module drives one reading of a stream: pickle after pickle, opcode after opcode, and what a
break or a limit means. Its parts share one ``WalkState`` (``walk_state``): ``fast_loop`` runs
the opcodes ordinary checkpoints are made of, ``load_events`` judges what the machine reports,
``joblib_reading`` reads joblib's array wrappers and forks the joblib reading.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import replace
from typing import BinaryIO

from app.core.findings import FindingSink, Severity
from app.core.formats.detect import looks_like_pickle
from app.core.formats.streams import CorruptStream
from app.core.limits import LimitExceeded, Limits, ReadBudgetExceeded
from app.core.scanners.pickle_engine import fast_loop, gc_pause, nested
from app.core.scanners.pickle_engine.joblib_reading import Fork, JoblibReading, ReadingStops, note_provenance
from app.core.scanners.pickle_engine.load_events import LoadEvents
from app.core.scanners.pickle_engine.machine import PickleMachine
from app.core.scanners.pickle_engine.reader import BrokenStream, OpReader
from app.core.scanners.pickle_engine.walk_state import PickleAnalysis, ReadMode, WalkState

RULE_BROKEN = "pickle-broken-stream"
RULE_TRAILING = "pickle-trailing-data"
RULE_TEXT = "pickle-text-lookalike"
RULE_BROKEN_INERT = "pickle-broken-inert"  # broke before any import or call: nothing ran
# Breaks every unpickler meets at the same byte: no such opcode, no more bytes, a protocol none
# reads. A break hfvet's model of the stack or of an argument's text could be wrong about (stack
# underflow, memo, a protocol-0 number) stays high: a loader that reads on would run what follows.
_CERTAIN_BREAKS = ("invalid opcode byte", "stream ends before STOP", "empty pickle stream", "truncated ",
                   "unsupported pickle protocol")

_CALL_OPS = frozenset({"REDUCE", "NEWOBJ", "NEWOBJ_EX", "OBJ", "INST"})
_SNIFF = 256
_NESTED = ReadMode(lenient=True)  # a pickle inside a constant: kept only if it acts
_FIRST = ReadMode()


def analyze_pickles(
    stream: BinaryIO,
    sink: FindingSink,
    limits: Limits,
    member: str | None = None,
    max_pickles: int | None = None,
    mode: ReadMode = _FIRST,
    nesting: tuple[nested.NestedBudget, int] | None = None,
    torch_load: bool = False,
) -> PickleAnalysis:
    """Walk the stacked pickles of ``stream`` (all of them, or the first ``max_pickles``), read
    as ``mode`` says.

    ``mode.lenient`` is for bytes that did not sniff as a pickle (text, unknown content); data
    that follows a pickle without looking like one is walked the same way. Lenient findings
    are kept only if the walk saw something a loader could act on: an import it could
    resolve, a computed import, or a limit that stopped the walk before it could tell.
    Without an import a pickle can build data but cannot call anything, so text that merely
    starts with opcode bytes stays quiet.

    A lenient stream that breaks before it called anything or imported a dangerous name is
    text, not broken weights: one low note replaces its findings (``cat\ndog\nbird`` imports
    ``at.dog``, then fails at BUILD). ``mode.loader_named`` is for text a loader would still
    unpickle by its name (``model.pkl``): there an import counts as acting, and even a break
    before any import is noted.

    ``mode.joblib`` (false where only another loader's unpickler runs: torch, numpy) adds the
    reading of ``joblib.load``: from the first ``NumpyArrayWrapper`` BUILD on, the stream is
    walked both as ``pickle.load`` reads it (array bytes as opcodes) and as joblib reads it
    (array bytes stepped over, object arrays as nested plain pickles); findings after that
    point name their reading in the evidence. ``mode.joblib_compat`` is joblib's reader of its
    pre-0.10 files (``ZipNumpyUnpickler``): side-file wrappers only, no in-stream arrays.

    ``torch_load`` (streams torch.load unpickles: torch zip records, legacy checkpoints) collects the
    storages persistent ids declare and makes SETITEM(S) on a non-dict critical (see ``torch_trust``).

    Byte and string constants that hold pickles themselves are walked too (see ``nested``);
    ``nesting`` is the budget shared with the outer walk and this walk's depth.
    """
    budget, depth = nesting or (nested.NestedBudget(limits.max_nested_pickle_depth, limits.max_nested_pickle_bytes,
                                                    limits.max_nested_constant_bytes), 0)
    state = WalkState(sink, limits, member, mode, torch_load, (budget, depth))
    analyzer = _Analyzer(state)
    reader = OpReader(stream, limits.max_string_arg, nested.starts_like_inner, budget.per_constant)
    with gc_pause.collector_paused():
        analyzer.run(reader, max_pickles)
    if analyzer.fork is not None:
        return _merged(state.result, analyzer.fork.twin.state.result)
    return state.result


def _merged(plain: PickleAnalysis, joblib: PickleAnalysis) -> PickleAnalysis:
    """Both readings at once: a joblib file is expected to break under pickle.load."""
    imports = [*plain.imports, *(i for i in joblib.imports if i not in plain.imports)]
    return PickleAnalysis(max(plain.pickles, joblib.pickles), plain.opcodes + joblib.opcodes, imports,
                          joblib.broken, plain.limit_hit or joblib.limit_hit)


def _walk_nested(data: bytes, sink: FindingSink, limits: Limits, member: str,
                 nesting: tuple[nested.NestedBudget, int]) -> None:
    analyze_pickles(io.BytesIO(data), sink, limits, member=member, mode=_NESTED, nesting=nesting)


class _Analyzer:
    """One reading of a stream (``joblib_reading.Reading``): its state and the parts that share it."""

    def __init__(self, state: WalkState) -> None:
        self.state = state
        self.events = LoadEvents(state, _walk_nested)
        self.joblib = JoblibReading(state, self._one_pickle)
        self.fork: Fork[_Analyzer] | None = None  # the joblib reading, once this (plain) reading forked

    def run(self, reader: OpReader, max_pickles: int | None) -> None:
        if self.state.mode.lenient:
            self.state.begin_trial()
        try:
            self.guarded(lambda: self.walk(reader, max_pickles))
            if self.fork is not None:
                fork = self.fork
                fork.twin.guarded(lambda: fork.resume(max_pickles))
        finally:
            if self.fork is not None:
                self.fork.rewind.close()

    def new_reading(self) -> _Analyzer:
        state = self.state
        mode = replace(state.mode, joblib=False, joblib_compat=False)
        # the joblib reading checks constants against the same budget
        return _Analyzer(WalkState(state.sink, state.limits, state.member, mode, nesting=state.nesting))

    def guarded(self, walk: Callable[[], None]) -> None:
        state = self.state
        try:
            walk()
        except ReadingStops:
            pass  # the reading's own finding says why
        except (BrokenStream, CorruptStream) as exc:
            state.result.broken = True
            if state.after_fork:
                # pickle.load breaks on joblib's array bytes; what it read there only counts if it acted
                if not state.trial_acted:
                    state.trial = None
                return
            if self._text_lookalike(exc) or self._broken_before_running(exc):
                return
            state.add(RULE_BROKEN, Severity.HIGH,
                      f"broken pickle stream ({exc}): a loader fails here, after running everything "
                      "before it; scanners that stop at the error miss that part", str(exc))
        except ReadBudgetExceeded:
            raise  # the file's read budget ends the whole scan, not just this stream
        except LimitExceeded as exc:
            state.result.limit_hit = True
            state.note_limit(f"pickle analysis stopped: {exc}", str(exc))
        finally:
            state.settle_trial()

    def _text_lookalike(self, exc: Exception) -> bool:
        """A lenient stream broke before it could act: drop its findings, note it at most low."""
        state, loader_named = self.state, self.state.mode.loader_named
        if state.trial is None or state.trial_acted or (loader_named and state.trial_counts):
            return False
        noted = state.trial_counts or loader_named
        state.trial = None  # what it imported were its own words, never called
        if noted:
            state.add(RULE_TEXT, Severity.LOW,
                      f"text that starts like pickle opcodes breaks ({exc}) before any call: a loader "
                      "fails there having run nothing", str(exc))
        return True

    def _broken_before_running(self, exc: Exception) -> bool:
        """The first pickle broke, where every unpickler breaks, before any import, call or BUILD: a
        loader fails there having run nothing (raw array bytes, a truncated header). Noted low; a
        later pickle's break stays high, as loaders differ on whether they read past the first one."""
        if not isinstance(exc, BrokenStream) or self.state.ran_code or self.state.result.pickles:
            return False
        if not str(exc).startswith(_CERTAIN_BREAKS):
            return False
        self.state.add(RULE_BROKEN_INERT, Severity.LOW,
                       f"broken pickle stream ({exc}) before any import or call: a loader fails there having "
                       "run nothing", str(exc))
        return True

    def walk(self, reader: OpReader, max_pickles: int | None) -> None:
        state = self.state
        result = state.result
        while max_pickles is None or result.pickles < max_pickles:
            if reader.at_eof():
                if result.pickles == 0:
                    raise BrokenStream("empty pickle stream", reader.pos)
                return
            if result.pickles and state.trial is None and not looks_like_pickle(reader.peek(_SNIFF)):
                state.add(RULE_TRAILING, Severity.LOW,
                          f"{result.pickles} pickle(s) followed by non-pickle data at offset "
                          f"{reader.pos}", f"offset {reader.pos}")
                # A pickle can hide from the sniffer (a long first argument); a loader that
                # reads on would still run it, so walk on leniently.
                state.begin_trial()
            self._one_pickle(reader)
            result.pickles += 1

    def _one_pickle(self, reader: OpReader) -> None:
        self.run_machine(PickleMachine(self.events), reader)

    def run_machine(self, machine: PickleMachine, reader: OpReader) -> None:
        if not self.state.after_fork and fast_loop.run(self.state, machine, reader, self._step):
            return
        while not self._step(machine, reader):  # the plain reading after a joblib fork: every opcode noted
            pass

    def _step(self, machine: PickleMachine, reader: OpReader) -> bool:
        """One opcode, the general way (any opcode, any failure); True at STOP."""
        op = reader.next_op()
        if op is None:
            raise BrokenStream("stream ends before STOP", reader.pos)
        state = self.state
        result = state.result
        result.opcodes += 1
        if result.opcodes > state.limits.max_pickle_opcodes:
            raise LimitExceeded(f"more than {state.limits.max_pickle_opcodes} opcodes")
        if op.name == "FRAME" and isinstance(op.arg, int):
            state.frame_end = reader.pos + op.arg  # the pure-Python unpickler reads it whole
        if state.after_fork:
            note_provenance(state, op, len(machine.memo))
        if machine.step(op):
            if state.depth == 0:
                result.value = machine.result
            return True
        built = machine.built
        if (built is not None and state.depth == 0 and (state.mode.joblib or state.joblib_rules)
                and self.joblib.on_build(machine, reader, op, built)):
            self.fork = Fork.start(state, self.new_reading(), machine, reader, op)
        if op.name in nested.CONSTANT_OPS:
            self.events.on_constant(op, reader)
        elif op.name in _CALL_OPS and machine.stack:
            self.events.on_computed(op, machine.stack[-1])
        return False
