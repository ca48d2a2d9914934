"""The joblib reading of a pickle stream, beside the plain ``pickle.load`` one.

``joblib.load`` unpickles with ``NumpyUnpickler`` (joblib/numpy_pickle.py), whose
``load_build`` reads a ``NumpyArrayWrapper``'s array straight from the file after its BUILD
(joblib_format sizes it). Up to the first such BUILD both loaders run the same opcodes; from
there the analyzer forks: the plain reading goes on at once, over the array bytes as opcodes,
and the joblib reading afterwards, from a copy of the machine, stepping over them. This
module is the analyzer's part that knows joblib: ``JoblibReading`` works on the walk's
``WalkState`` (no analyzer attributes of its own), ``Fork`` drives the joblib reading through
the public ``Reading`` protocol the analyzer meets.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from app.core.findings import FindingSink, Severity
from app.core.limits import LimitExceeded
from app.core.scanners.pickle_engine import joblib_format as pickle_joblib
from app.core.scanners.pickle_engine.machine import Events, PickleMachine
from app.core.scanners.pickle_engine.reader import Op, OpReader, Rewind
from app.core.scanners.pickle_engine.values import OPAQUE, Call
from app.core.scanners.pickle_engine.walk_state import WalkState

RULE_JOBLIB_UNSIZED = "joblib-array-unsized"
RULE_JOBLIB_SIDE_FILE = "joblib-side-file"
PLAIN_READING = "pickle.load reading"
JOBLIB_READING = "joblib.load reading"

_MEMO_PUTS = frozenset({"PUT", "BINPUT", "LONG_BINPUT"})
_MEMO_GETS = frozenset({"GET", "BINGET", "LONG_BINGET"})
_STRING_OPS = frozenset({"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING",
                         "BINSTRING", "STRING"})
DECODED_NAME = "STACK_GLOBAL of a decoded name"  # opcodes.py's detail for names computed by pure helpers
MAX_FRAME_TAIL = 16 * 1024 * 1024  # frames pickle writes are ~64 KiB; a bigger tail is held in memory
MAX_NESTED_PICKLES = 8  # joblib object arrays inside object arrays...


class JoblibReading:
    """What a reading does at a joblib wrapper's BUILD, on the walk's ``state``.

    ``one_pickle`` walks one whole pickle from the reader (an object array's nested pickle);
    the analyzer hands in its own, so the nested pickle is walked as any other.
    """

    def __init__(self, state: WalkState, one_pickle: Callable[[OpReader], None]) -> None:
        self.state = state
        self._one_pickle = one_pickle

    def on_build(self, machine: PickleMachine, reader: OpReader, op: Op, built: Call) -> bool:
        """joblib's NumpyUnpickler.load_build: the wrapper on top of the stack is read.

        True when the plain reading must fork here (the analyzer starts the ``Fork``)."""
        cls = pickle_joblib.wrapper_class(built)
        if cls is None:
            return False
        state = self.state
        if cls in pickle_joblib.SIDE_FILE_WRAPPERS:
            if not state.after_fork:  # the joblib reading's finding: once, from whichever runs it
                self._side_file(built, op, raw=cls in pickle_joblib.RAW_SIDE_FILE_WRAPPERS)
        elif state.mode.joblib_compat:
            return False  # ZipNumpyUnpickler.load_build only knows NDArrayWrapper
        elif state.joblib_rules:
            self.read_array(machine, reader, op, built)
        else:
            return not state.after_fork  # pickle.load reads on from here
        return False

    def read_array(self, machine: PickleMachine, reader: OpReader, op: Op, built: Call) -> None:
        """Step over what NumpyArrayWrapper.read_array takes from the file, as joblib sizes it."""
        try:
            attrs = self.state.wrapper_attrs.get(id(built)) or pickle_joblib.init_attributes(built)
            pickle_joblib.apply_state(attrs, built.state if built.state is not None else OPAQUE)
            self.state.wrapper_attrs[id(built)] = attrs
            layout = pickle_joblib.array_layout(attrs)
        except pickle_joblib.UnsizedArray as exc:
            self.state.add(RULE_JOBLIB_UNSIZED, Severity.HIGH,
                           f"joblib.load reads array data after the BUILD at offset {op.pos} that hfvet cannot "
                           f"size ({exc}); the joblib reading is not vetted past it", str(exc))
            raise ReadingStops from None
        tail = self._frame_tail(reader)
        if layout.has_object:
            self._nested_pickle(reader)
        else:
            if layout.padded:
                padding = reader.read_exact(1, "joblib alignment")[0]
                reader.skip(padding, "joblib alignment")
            reader.skip(layout.nbytes, "joblib array data")
        reader.unread(tail)  # the unpickler goes on with the rest of its frame, then the file
        machine.stack[-1] = OPAQUE  # joblib swaps the wrapper for the array it read

    def _frame_tail(self, reader: OpReader) -> bytes:
        """The current frame's bytes after the BUILD: joblib's unpickler already holds them.

        ``pickle._Unframer.load_frame`` reads a whole FRAME from the file, while
        ``read_array`` reads the array from the file itself: it starts after the frame.
        """
        left = self.state.frame_end - reader.pos
        if left <= 0:
            return b""
        if left > MAX_FRAME_TAIL:
            self.state.add(RULE_JOBLIB_UNSIZED, Severity.HIGH,
                           f"joblib array read inside a pickle frame with {left} more bytes; the joblib "
                           "reading is not vetted past it", f"frame tail of {left} bytes")
            raise ReadingStops
        return reader.read_exact(left, "FRAME")

    def _side_file(self, built: Call, op: Op, raw: bool) -> None:
        """numpy_pickle_compat: NDArrayWrapper.read np.loads the side file with allow_pickle=True (an
        object array in it is unpickled: hfvet vets that file on its own); ZNDArrayWrapper.read takes
        it through read_zfile as raw array bytes for ndarray.__setstate__, never unpickled. Either
        way a name leaving the folder reads a file the repo does not hold."""
        try:
            attrs = pickle_joblib.init_attributes(built)
            pickle_joblib.apply_state(attrs, built.state if built.state is not None else OPAQUE)
        except pickle_joblib.UnsizedArray:
            attrs = {}  # the file name is unknown: judged as a name that may lead anywhere
        name, escapes = pickle_joblib.side_file(attrs)
        where = "a file outside the checkpoint's folder" if escapes else "a file beside it, which hfvet vets on its own"
        if raw:
            how, severity = "as raw zlib-compressed array bytes (read_zfile), never unpickled", Severity.LOW
        else:
            how, severity = "with np.load(allow_pickle=True)", Severity.MEDIUM
        self.state.add(RULE_JOBLIB_SIDE_FILE, Severity.HIGH if escapes else severity,
                       f"joblib.load opens the side file {name!r} (BUILD at offset {op.pos}) {how}: {where}",
                       f"{JOBLIB_READING}: {name!r}", tagged=True)

    def _nested_pickle(self, reader: OpReader) -> None:
        # read_array: an object array is a whole pickle read by a plain Unpickler on the same
        # file; that unpickler knows nothing of wrappers, so its BUILDs read no array bytes.
        state = self.state
        if state.depth >= MAX_NESTED_PICKLES:
            raise LimitExceeded(f"joblib object arrays nested more than {MAX_NESTED_PICKLES} deep")
        state.depth += 1
        outer_frame, state.frame_end = state.frame_end, -1
        try:
            self._one_pickle(reader)
            if state.frame_end > reader.pos:  # the nested unpickler read its last frame whole
                reader.skip(state.frame_end - reader.pos, "nested pickle frame")
        finally:
            state.depth -= 1
            state.frame_end = outer_frame


def note_provenance(state: WalkState, op: Op, memo_size: int) -> None:
    """After the fork, the plain reading keeps what it pushed and memoized itself (see ``fresh_import``)."""
    if op.name in _MEMO_PUTS and isinstance(op.arg, int):
        state.fresh_memo.add(op.arg)
    elif op.name == "MEMOIZE":
        state.fresh_memo.add(memo_size)
    state.recent = [*state.recent[-7:], (op.name, op.arg)]


def fresh_import(state: WalkState) -> bool:
    """The STACK_GLOBAL just read names strings pushed or memoized after the fork.

    A benign joblib file read by pickle.load reaches its object arrays' nested pickles,
    whose GETs land on the outer pickle's memo ("subclass", "dtype"...): names nobody
    wrote as a name. A payload hidden in array bytes writes its own names.
    """
    operands = [(n, a) for n, a in state.recent[:-1] if n not in _MEMO_PUTS and n != "MEMOIZE"][-2:]
    return len(operands) == 2 and all(
        n in _STRING_OPS or (n in _MEMO_GETS and a in state.fresh_memo) for n, a in operands)


class ReadingStops(Exception):
    """This reading cannot go on (its finding is already added); the other reading still runs."""


class Reading(Protocol):
    """One reading of the stream, as the fork drives the joblib one (``analysis._Analyzer`` is one)."""

    @property
    def state(self) -> WalkState: ...

    @property
    def events(self) -> Events: ...

    @property
    def joblib(self) -> JoblibReading: ...

    def run_machine(self, machine: PickleMachine, reader: OpReader) -> None: ...

    def walk(self, reader: OpReader, max_pickles: int | None) -> None: ...


R = TypeVar("R", bound=Reading)


class Fork(Generic[R]):
    """The joblib reading, forked from the plain one at the first NumpyArrayWrapper BUILD.

    Up to that BUILD both unpicklers ran the same opcodes (reported once). From there
    ``pickle.load`` reads the array bytes as opcodes while ``joblib.load`` reads them as data:
    the plain reading goes on at once, the joblib one afterwards from a copy of the machine.
    """

    def __init__(self, twin: R, machine: PickleMachine, rewind: Rewind, op: Op) -> None:
        self.twin = twin
        self._machine = machine
        self.rewind = rewind
        self._op = op

    @classmethod
    def start(cls, plain: WalkState, twin: R, machine: PickleMachine, reader: OpReader, op: Op) -> Fork[R]:
        """Fork ``twin`` (a fresh joblib reading) from the ``plain`` reading's state at ``op``."""
        joblib = twin.state
        joblib.reading, plain.reading = JOBLIB_READING, PLAIN_READING
        joblib.joblib_rules = True
        joblib.ran_code = plain.ran_code  # both readings ran the same opcodes up to the fork
        joblib.frame_end = plain.frame_end
        joblib.seen, joblib.imported = set(plain.seen), set(plain.imported)
        joblib.result = copy.deepcopy(plain.result)
        if plain.trial is not None:
            joblib.trial = FindingSink(plain.sink.path, plain.sink.scanner)
            joblib.trial.findings.extend(plain.trial.findings)
            joblib.trial_counts, joblib.trial_acted = plain.trial_counts, plain.trial_acted
        copied = PickleMachine(twin.events)
        copied.stack, copied.metastack, copied.memo = copy.deepcopy((machine.stack, machine.metastack, machine.memo))
        copied.memo_overflow = machine.memo_overflow
        plain.begin_trial()
        plain.trial_counts, plain.after_fork = True, True  # kept if it reads to the end
        return cls(twin, copied, reader.rewind(plain.limits.max_decompressed_bytes), op)

    def resume(self, max_pickles: int | None) -> None:
        reader, machine = self.rewind.open(), self._machine
        built = machine.stack[-1]
        if isinstance(built, Call):
            self.twin.joblib.read_array(machine, reader, self._op, built)
        self.twin.run_machine(machine, reader)
        self.twin.state.result.pickles += 1
        self.twin.walk(reader, max_pickles)
