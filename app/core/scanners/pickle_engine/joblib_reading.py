"""The joblib reading of a pickle stream, beside the plain ``pickle.load`` one.

``joblib.load`` unpickles with ``NumpyUnpickler`` (joblib/numpy_pickle.py), whose
``load_build`` reads a ``NumpyArrayWrapper``'s array straight from the file after its BUILD
(joblib_format sizes it). Up to the first such BUILD both loaders run the same opcodes; from
there the analyzer forks: the plain reading goes on at once, over the array bytes as opcodes,
and the joblib reading afterwards, from a copy of the machine, stepping over them. This
module is the analyzer's half that knows joblib (a mixin of ``analysis._Analyzer``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from app.core.findings import FindingSink, Severity
from app.core.limits import LimitExceeded, Limits
from app.core.scanners.pickle_engine import joblib_format as pickle_joblib
from app.core.scanners.pickle_engine.machine import PickleMachine
from app.core.scanners.pickle_engine.reader import Op, OpReader, Rewind
from app.core.scanners.pickle_engine.values import OPAQUE, Call, Value

if TYPE_CHECKING:
    from app.core.scanners.pickle_engine.analysis import PickleAnalysis
    from app.core.scanners.pickle_engine.machine import Events

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
    """What the analyzer does at a joblib wrapper's BUILD. The analyzer provides the state."""

    sink: FindingSink
    limits: Limits
    member: str | None
    result: PickleAnalysis
    compat: bool
    _joblib: bool
    _joblib_rules: bool
    _fork: Fork | None
    _reading: str
    _wrapper_attrs: dict[int, dict[str, Value]]
    _frame_end: int
    _after_fork: bool
    _recent: list[tuple[str, object]]
    _fresh_memo: set[int]
    _depth: int
    _seen: set[tuple[str, str]]
    _imported: set[str]
    _trial: FindingSink | None
    _trial_counts: bool
    _trial_acted: bool
    ran_code: bool

    def new_reading(self) -> JoblibReading:
        raise NotImplementedError

    def _add(self, rule: str, severity: Severity, message: str, evidence: str, tagged: bool = False) -> None:
        raise NotImplementedError

    def _one_pickle(self, reader: OpReader) -> None:
        raise NotImplementedError

    def _run_machine(self, machine: PickleMachine, reader: OpReader) -> None:
        raise NotImplementedError

    def _walk(self, reader: OpReader, max_pickles: int | None) -> None:
        raise NotImplementedError

    def _begin_trial(self) -> None:
        raise NotImplementedError

    def _guarded(self, walk: Callable[[], None]) -> None:
        raise NotImplementedError

    def _on_build(self, machine: PickleMachine, reader: OpReader, op: Op, built: Call) -> None:
        """joblib's NumpyUnpickler.load_build: the wrapper on top of the stack is read."""
        cls = pickle_joblib.wrapper_class(built)
        if cls is None:
            return
        if cls in pickle_joblib.SIDE_FILE_WRAPPERS:
            if self._fork is None:  # the joblib reading's finding: once, from whichever runs it
                self._side_file(built, op, raw=cls in pickle_joblib.RAW_SIDE_FILE_WRAPPERS)
        elif self.compat:
            return  # ZipNumpyUnpickler.load_build only knows NDArrayWrapper
        elif self._joblib_rules:
            self.read_array(machine, reader, op, built)
        elif self._fork is None:
            self._fork = Fork.start(self, machine, reader, op)  # pickle.load reads on from here

    def read_array(self, machine: PickleMachine, reader: OpReader, op: Op, built: Call) -> None:
        """Step over what NumpyArrayWrapper.read_array takes from the file, as joblib sizes it."""
        try:
            attrs = self._wrapper_attrs.get(id(built)) or pickle_joblib.init_attributes(built)
            pickle_joblib.apply_state(attrs, built.state if built.state is not None else OPAQUE)
            self._wrapper_attrs[id(built)] = attrs
            layout = pickle_joblib.array_layout(attrs)
        except pickle_joblib.UnsizedArray as exc:
            self._add(RULE_JOBLIB_UNSIZED, Severity.HIGH,
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

    def _note_provenance(self, op: Op, memo_size: int) -> None:
        if op.name in _MEMO_PUTS and isinstance(op.arg, int):
            self._fresh_memo.add(op.arg)
        elif op.name == "MEMOIZE":
            self._fresh_memo.add(memo_size)
        self._recent = [*self._recent[-7:], (op.name, op.arg)]

    def _fresh_import(self) -> bool:
        """The STACK_GLOBAL just read names strings pushed or memoized after the fork.

        A benign joblib file read by pickle.load reaches its object arrays' nested pickles,
        whose GETs land on the outer pickle's memo ("subclass", "dtype"...): names nobody
        wrote as a name. A payload hidden in array bytes writes its own names.
        """
        operands = [(n, a) for n, a in self._recent[:-1] if n not in _MEMO_PUTS and n != "MEMOIZE"][-2:]
        return len(operands) == 2 and all(
            n in _STRING_OPS or (n in _MEMO_GETS and a in self._fresh_memo) for n, a in operands)

    def _frame_tail(self, reader: OpReader) -> bytes:
        """The current frame's bytes after the BUILD: joblib's unpickler already holds them.

        ``pickle._Unframer.load_frame`` reads a whole FRAME from the file, while
        ``read_array`` reads the array from the file itself: it starts after the frame.
        """
        left = self._frame_end - reader.pos
        if left <= 0:
            return b""
        if left > MAX_FRAME_TAIL:
            self._add(RULE_JOBLIB_UNSIZED, Severity.HIGH,
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
        self._add(RULE_JOBLIB_SIDE_FILE, Severity.HIGH if escapes else severity,
                  f"joblib.load opens the side file {name!r} (BUILD at offset {op.pos}) {how}: {where}",
                  f"{JOBLIB_READING}: {name!r}", tagged=True)

    def _nested_pickle(self, reader: OpReader) -> None:
        # read_array: an object array is a whole pickle read by a plain Unpickler on the same
        # file; that unpickler knows nothing of wrappers, so its BUILDs read no array bytes.
        if self._depth >= MAX_NESTED_PICKLES:
            raise LimitExceeded(f"joblib object arrays nested more than {MAX_NESTED_PICKLES} deep")
        self._depth += 1
        outer_frame, self._frame_end = self._frame_end, -1
        try:
            self._one_pickle(reader)
            if self._frame_end > reader.pos:  # the nested unpickler read its last frame whole
                reader.skip(self._frame_end - reader.pos, "nested pickle frame")
        finally:
            self._depth -= 1
            self._frame_end = outer_frame


class ReadingStops(Exception):
    """This reading cannot go on (its finding is already added); the other reading still runs."""


class Fork:
    """The joblib reading, forked from the plain one at the first NumpyArrayWrapper BUILD.

    Up to that BUILD both unpicklers ran the same opcodes (reported once). From there
    ``pickle.load`` reads the array bytes as opcodes while ``joblib.load`` reads them as data:
    the plain reading goes on at once, the joblib one afterwards from a copy of the machine.
    """

    def __init__(self, twin: JoblibReading, machine: PickleMachine, rewind: Rewind, op: Op) -> None:
        self.twin = twin
        self._machine = machine
        self.rewind = rewind
        self._op = op

    @classmethod
    def start(cls, plain: JoblibReading, machine: PickleMachine, reader: OpReader, op: Op) -> Fork:
        twin = plain.new_reading()
        twin._reading, plain._reading = JOBLIB_READING, PLAIN_READING
        twin._joblib_rules = True
        twin.ran_code = plain.ran_code  # both readings ran the same opcodes up to the fork
        twin._frame_end = plain._frame_end
        twin._seen, twin._imported = set(plain._seen), set(plain._imported)
        twin.result = copy.deepcopy(plain.result)
        if plain._trial is not None:
            twin._trial = FindingSink(plain.sink.path, plain.sink.scanner)
            twin._trial.findings.extend(plain._trial.findings)
            twin._trial_counts, twin._trial_acted = plain._trial_counts, plain._trial_acted
        copied = PickleMachine(cast("Events", twin))  # the analyzer is the machine's Events
        copied.stack, copied.metastack, copied.memo = copy.deepcopy((machine.stack, machine.metastack, machine.memo))
        copied.memo_overflow = machine.memo_overflow
        plain._begin_trial()
        plain._trial_counts, plain._after_fork = True, True  # kept if it reads to the end
        return cls(twin, copied, reader.rewind(plain.limits.max_decompressed_bytes), op)

    def resume(self, max_pickles: int | None) -> None:
        reader, machine = self.rewind.open(), self._machine
        built = machine.stack[-1]
        if isinstance(built, Call):
            self.twin.read_array(machine, reader, self._op, built)
        self.twin._run_machine(machine, reader)
        self.twin.result.pickles += 1
        self.twin._walk(reader, max_pickles)
