"""hfvet's own pickle analysis: walk every opcode of every stacked pickle in a stream and
report what a loader would import, call or mutate. Nothing is ever unpickled.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

from app.core.findings import FindingSink, Severity
from app.core.formats.detect import looks_like_pickle
from app.core.formats.streams import CorruptStream
from app.core.limits import LimitExceeded, Limits, ReadBudgetExceeded
from app.core.scanners.pickle_engine import calls, fast_loop, gc_pause, nested, torch_trust
from app.core.scanners.pickle_engine.catalog import Verdict, classify
from app.core.scanners.pickle_engine.joblib_reading import (
    DECODED_NAME,
    JoblibReading,
    ReadingStops,
)
from app.core.scanners.pickle_engine.machine import PickleMachine
from app.core.scanners.pickle_engine.reader import SKIPPED, BrokenStream, Op, OpReader
from app.core.scanners.pickle_engine.values import Const, GlobalRef, Value

RULE_DANGEROUS = "pickle-dangerous-global"
RULE_UNRESOLVED = "pickle-unresolved-global"
RULE_UNKNOWN = "pickle-unknown-global"
RULE_BROKEN = "pickle-broken-stream"
RULE_MUTATION = calls.RULE_MUTATION
RULE_DYNAMIC_CALL = calls.RULE_DYNAMIC_CALL
RULE_SUSPICIOUS_CALL = calls.RULE_SUSPICIOUS_CALL
RULE_UNKNOWN_CALL = calls.RULE_UNKNOWN_CALL
RULE_UNSAFE_ARGUMENT = calls.RULE_UNSAFE_ARGUMENT
RULE_OBJECT_MUTATION = calls.RULE_OBJECT_MUTATION
RULE_TRAILING = "pickle-trailing-data"
RULE_LIMIT = "limit-exceeded"
RULE_TEXT = "pickle-text-lookalike"
RULE_BROKEN_INERT = "pickle-broken-inert"  # broke before any import or call: nothing ran
# Breaks every unpickler meets at the same byte: no such opcode, no more bytes, a protocol none
# reads. A break hfvet's model of the stack or of an argument's text could be wrong about (stack
# underflow, memo, a protocol-0 number) stays high: a loader that reads on would run what follows.
_CERTAIN_BREAKS = ("invalid opcode byte", "stream ends before STOP", "empty pickle stream", "truncated ",
                   "unsupported pickle protocol")
RULE_SETITEM = "torch-setitem-non-dict"

_CALL_OPS = frozenset({"REDUCE", "NEWOBJ", "NEWOBJ_EX", "OBJ", "INST"})
_SNIFF = 256
_IMPORTABLE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")  # "module.name" a loader could import

@dataclass
class PickleAnalysis:
    pickles: int = 0  # complete pickles walked (up to STOP)
    opcodes: int = 0
    imports: list[str] = field(default_factory=list)  # "module.name", first-seen order
    broken: bool = False
    limit_hit: bool = False
    value: Value | None = None  # what the last complete top-level pickle returns (its STOP operand)
    storages: list[torch_trust.StorageRef] = field(default_factory=list)  # torch.load readings only


def analyze_pickles(
    stream: BinaryIO,
    sink: FindingSink,
    limits: Limits,
    member: str | None = None,
    max_pickles: int | None = None,
    lenient: bool = False,
    loader_named: bool = False,
    joblib: bool = True,
    joblib_compat: bool = False,
    nesting: tuple[nested.NestedBudget, int] | None = None,
    torch_load: bool = False,
) -> PickleAnalysis:
    """Walk the stacked pickles of ``stream`` (all of them, or the first ``max_pickles``).

    ``lenient`` is for bytes that did not sniff as a pickle (text, unknown content); data
    that follows a pickle without looking like one is walked the same way. Lenient findings
    are kept only if the walk saw something a loader could act on: an import it could
    resolve, a computed import, or a limit that stopped the walk before it could tell.
    Without an import a pickle can build data but cannot call anything, so text that merely
    starts with opcode bytes stays quiet.

    A lenient stream that breaks before it called anything or imported a dangerous name is
    text, not broken weights: one low note replaces its findings (``cat\ndog\nbird`` imports
    ``at.dog``, then fails at BUILD). ``loader_named`` is for text a loader would still
    unpickle by its name (``model.pkl``): there an import counts as acting, and even a break
    before any import is noted.

    ``joblib`` (false where only another loader's unpickler runs: torch, numpy) adds the
    reading of ``joblib.load``: from the first ``NumpyArrayWrapper`` BUILD on, the stream is
    walked both as ``pickle.load`` reads it (array bytes as opcodes) and as joblib reads it
    (array bytes stepped over, object arrays as nested plain pickles); findings after that
    point name their reading in the evidence. ``joblib_compat`` is joblib's reader of its
    pre-0.10 files (``ZipNumpyUnpickler``): side-file wrappers only, no in-stream arrays.

    ``torch_load`` (streams torch.load unpickles: torch zip records, legacy checkpoints) collects the
    storages persistent ids declare and makes SETITEM(S) on a non-dict critical (see ``torch_trust``).

    Byte and string constants that hold pickles themselves are walked too (see ``nested``);
    ``nesting`` is the budget shared with the outer walk and this walk's depth.
    """
    budget, depth = nesting or (nested.NestedBudget(limits.max_nested_pickle_depth, limits.max_nested_pickle_bytes,
                                                    limits.max_nested_constant_bytes), 0)
    analyzer = _Analyzer(sink, limits, member, loader_named, joblib)
    analyzer.compat = joblib_compat
    analyzer.torch_load = torch_load
    analyzer.nesting = (budget, depth)
    reader = OpReader(stream, limits.max_string_arg, nested.starts_like_inner, budget.per_constant)
    with gc_pause.collector_paused():
        analyzer.run(reader, max_pickles, lenient)
    if analyzer._fork is not None:
        return _merged(analyzer.result, analyzer._fork.twin.result)
    return analyzer.result


def _merged(plain: PickleAnalysis, joblib: PickleAnalysis) -> PickleAnalysis:
    """Both readings at once: a joblib file is expected to break under pickle.load."""
    imports = [*plain.imports, *(i for i in joblib.imports if i not in plain.imports)]
    return PickleAnalysis(max(plain.pickles, joblib.pickles), plain.opcodes + joblib.opcodes, imports,
                          joblib.broken, plain.limit_hit or joblib.limit_hit)


class _Analyzer(JoblibReading):
    def __init__(self, sink: FindingSink, limits: Limits, member: str | None, loader_named: bool = False,
                 joblib: bool = False) -> None:
        self.sink = sink
        self.limits = limits
        self.member = member
        self.result = PickleAnalysis()
        self._seen: set[tuple[str, str]] = set()
        self._imported: set[str] = set()
        self._depth = 0
        self._trial: FindingSink | None = None  # lenient findings, held back until settled
        self._trial_counts = False  # the lenient part showed an import or a limit: keep its findings
        self._trial_acted = False  # ... and a call or a dangerous or computed import: kept even if it breaks
        self.ran_code = False  # an import, call or BUILD a loader would have executed, so far
        self._loader_named = loader_named
        self._joblib = joblib  # joblib.load could open this stream: fork its reading at the first wrapper
        self.compat = False  # joblib's pre-0.10 unpickler: side files only
        self.torch_load = False  # torch.load's unpickler reads this stream (storages, SETITEM targets)
        self._joblib_rules = False  # this analyzer is the joblib reading: wrappers read array data
        self._fork = None
        self._reading = ""  # once the readings diverge: which one this analyzer is
        self._wrapper_attrs: dict[int, dict[str, Value]] = {}
        self._frame_end = -1  # where the last FRAME ends (stream offset)
        # The plain reading after a fork reads joblib's array bytes and nested pickles as opcodes:
        # its findings count only if it acts on what it read itself (see _fresh_import).
        self._after_fork = False
        self._recent: list[tuple[str, object]] = []
        self._fresh_memo: set[int] = set()
        self.nesting: tuple[nested.NestedBudget, int] | None = None

    def run(self, reader: OpReader, max_pickles: int | None, lenient: bool) -> None:
        if lenient:
            self._begin_trial()
        try:
            self._guarded(lambda: self._walk(reader, max_pickles))
            if self._fork is not None:
                fork = self._fork
                fork.twin._guarded(lambda: fork.resume(max_pickles))
        finally:
            if self._fork is not None:
                self._fork.rewind.close()

    def new_reading(self) -> _Analyzer:
        twin = _Analyzer(self.sink, self.limits, self.member, self._loader_named)
        twin.nesting = self.nesting  # the joblib reading checks constants against the same budget
        return twin

    def _guarded(self, walk: Callable[[], None]) -> None:
        try:
            walk()
        except ReadingStops:
            pass  # the reading's own finding says why
        except (BrokenStream, CorruptStream) as exc:
            self.result.broken = True
            if self._fork is not None:
                # pickle.load breaks on joblib's array bytes; what it read there only counts if it acted
                if not self._trial_acted:
                    self._trial = None
                return
            if self._text_lookalike(exc) or self._broken_before_running(exc):
                return
            self._add(RULE_BROKEN, Severity.HIGH,
                      f"broken pickle stream ({exc}): a loader fails here, after running everything "
                      "before it; scanners that stop at the error miss that part", str(exc))
        except ReadBudgetExceeded:
            raise  # the file's read budget ends the whole scan, not just this stream
        except LimitExceeded as exc:
            self.result.limit_hit = True
            self._trial_counts = True  # stopped before it could tell: never quiet
            self._add(RULE_LIMIT, Severity.HIGH, f"pickle analysis stopped: {exc}", str(exc))
        finally:
            self._settle_trial()

    def _text_lookalike(self, exc: Exception) -> bool:
        """A lenient stream broke before it could act: drop its findings, note it at most low."""
        if self._trial is None or self._trial_acted or (self._loader_named and self._trial_counts):
            return False
        noted = self._trial_counts or self._loader_named
        self._trial = None  # what it imported were its own words, never called
        if noted:
            self._add(RULE_TEXT, Severity.LOW,
                      f"text that starts like pickle opcodes breaks ({exc}) before any call: a loader "
                      "fails there having run nothing", str(exc))
        return True

    def _broken_before_running(self, exc: Exception) -> bool:
        """The first pickle broke, where every unpickler breaks, before any import, call or BUILD: a
        loader fails there having run nothing (raw array bytes, a truncated header). Noted low; a
        later pickle's break stays high, as loaders differ on whether they read past the first one."""
        if not isinstance(exc, BrokenStream) or self.ran_code or self.result.pickles:
            return False
        if not str(exc).startswith(_CERTAIN_BREAKS):
            return False
        self._add(RULE_BROKEN_INERT, Severity.LOW,
                  f"broken pickle stream ({exc}) before any import or call: a loader fails there having run "
                  "nothing", str(exc))
        return True

    def _begin_trial(self) -> None:
        if self._trial is None:
            self._trial = FindingSink(self.sink.path, self.sink.scanner)
            self._trial_counts = self._trial_acted = False  # judged on the lenient part alone

    def _settle_trial(self) -> None:
        if self._trial is not None and self._trial_counts:
            self.sink.findings.extend(self._trial.findings)
        self._trial = None

    def _walk(self, reader: OpReader, max_pickles: int | None) -> None:
        while max_pickles is None or self.result.pickles < max_pickles:
            if reader.at_eof():
                if self.result.pickles == 0:
                    raise BrokenStream("empty pickle stream", reader.pos)
                return
            if self.result.pickles and self._trial is None and not looks_like_pickle(reader.peek(_SNIFF)):
                self._add(RULE_TRAILING, Severity.LOW,
                          f"{self.result.pickles} pickle(s) followed by non-pickle data at offset "
                          f"{reader.pos}", f"offset {reader.pos}")
                # A pickle can hide from the sniffer (a long first argument); a loader that
                # reads on would still run it, so walk on leniently.
                self._begin_trial()
            self._one_pickle(reader)
            self.result.pickles += 1

    def _one_pickle(self, reader: OpReader) -> None:
        self._run_machine(PickleMachine(self), reader)

    def _run_machine(self, machine: PickleMachine, reader: OpReader) -> None:
        if not self._after_fork and fast_loop.run(self, machine, reader):
            return
        while not self._step(machine, reader):  # the plain reading after a joblib fork: every opcode noted
            pass

    def _step(self, machine: PickleMachine, reader: OpReader) -> bool:
        """One opcode, the general way (any opcode, any failure); True at STOP."""
        op = reader.next_op()
        if op is None:
            raise BrokenStream("stream ends before STOP", reader.pos)
        self.result.opcodes += 1
        if self.result.opcodes > self.limits.max_pickle_opcodes:
            raise LimitExceeded(f"more than {self.limits.max_pickle_opcodes} opcodes")
        if op.name == "FRAME" and isinstance(op.arg, int):
            self._frame_end = reader.pos + op.arg  # the pure-Python unpickler reads it whole
        if self._after_fork:
            self._note_provenance(op, len(machine.memo))
        if machine.step(op):
            if self._depth == 0:
                self.result.value = machine.result
            return True
        built = machine.built
        if built is not None and self._depth == 0 and (self._joblib or self._joblib_rules):
            self._on_build(machine, reader, op, built)
        if op.name in nested.CONSTANT_OPS:
            self._constant(op, reader)
        elif op.name in _CALL_OPS and machine.stack:
            self._computed(op, machine.stack[-1])
        return False

    # -- pickles inside constants
    def _constant(self, op: Op, reader: OpReader) -> None:
        arg = op.arg
        if arg is SKIPPED:
            kept, unread = reader.take_long()
        elif isinstance(arg, (bytes, str)) and len(arg) >= nested.MIN_BYTES:  # most keys stop here, cheaply
            kept, unread = _as_bytes(arg), 0
        else:
            return
        self._check_constant(op, kept, unread)

    def _computed(self, op: Op, top: Value) -> None:
        """A constant the load computes (``bytes.join`` of pieces, a decode): checked like a written one."""
        if isinstance(top, Const) and top.computed and isinstance(top.value, (bytes, bytearray, str)):
            value = top.value
            if len(value) >= nested.MIN_BYTES:
                self._check_constant(op, bytes(value) if isinstance(value, bytearray) else _as_bytes(value), 0)

    def _check_constant(self, op: Op, kept: bytes | None, unread: int) -> None:
        if unread:
            self._nested_limit(f"a {unread}-byte {op.name} constant at offset {op.pos} starts like a "
                               "(possibly encoded) pickle and is larger than a nested pickle is read; not vetted", op)
        if kept is None or len(kept) < nested.MIN_BYTES or self.nesting is None:
            return
        budget, depth = self.nesting
        if depth >= budget.max_depth:
            if nested.starts_like_inner(kept[:256]):
                self._nested_limit(f"pickles nested more than {budget.max_depth} deep: the {op.name} constant "
                                   f"at offset {op.pos} was not vetted", op)
            return
        try:
            for how, data in nested.inner_pickles(kept, budget.per_constant):
                budget.take(len(data))
                self._inner(op, how, data, budget, depth + 1)
        except LimitExceeded as exc:
            self._nested_limit(f"nested pickle in the {op.name} constant at offset {op.pos}: {exc}; not vetted", op)

    def _nested_limit(self, message: str, op: Op) -> None:
        self._trial_counts = True  # stopped before it could tell: never quiet, even in a lenient walk
        self._add(RULE_LIMIT, Severity.HIGH, message, f"{op.name} at offset {op.pos}: {message}")

    def _inner(self, op: Op, how: str, data: bytes, budget: nested.NestedBudget, depth: int) -> None:
        where = f"<{op.name} at offset {op.pos}, {how}>"
        member = where if self.member is None else f"{self.member}!{where}"
        inner = FindingSink(self.sink.path, self.sink.scanner)
        analyze_pickles(io.BytesIO(data), inner, self.limits, member=member, lenient=True, nesting=(budget, depth))
        sink = self.sink if self._trial is None else self._trial
        for found in inner.findings:
            self._trial_counts = True  # the inner walk kept it: it imported something
            self._trial_acted = self._trial_acted or found.severity.rank >= Severity.HIGH.rank
            sink.add(found.rule, found.severity, f"pickle nested in a constant ({how}): {found.message}",
                     member=found.member, evidence=found.evidence)

    # -- Events: called by the machine
    def on_global(self, ref: GlobalRef, op: Op) -> None:
        self.ran_code = True  # find_class imports the module
        dotted = ref.dotted
        if self._trial is not None and _IMPORTABLE.fullmatch(dotted):
            self._trial_counts = True
        if dotted not in self._imported:
            self._imported.add(dotted)
            self.result.imports.append(dotted)
        verdict = classify(ref.module, ref.name)
        fresh = self._after_fork and (op.name in ("GLOBAL", "INST") or self._fresh_import())
        if fresh and verdict.verdict is not Verdict.SAFE:
            self._trial_acted = True  # a name the plain-only bytes wrote themselves
        if verdict.verdict is Verdict.DANGEROUS:
            self._trial_acted = True
            self._add(RULE_DANGEROUS, Severity.CRITICAL,
                      f"pickle imports {dotted}: {verdict.reason}", dotted)
        elif verdict.verdict is Verdict.UNKNOWN:
            self._add(RULE_UNKNOWN, Severity.MEDIUM,
                      f"unknown import {dotted}: not a global ordinary checkpoints use", dotted)

    def on_unresolved(self, detail: str, op: Op) -> None:
        self.ran_code = True
        if self._trial is not None:
            self._trial_counts = True
            # An extension code resolves through copyreg's registry, empty unless the loading
            # program filled it: in bytes that are not a pickle (a msgpack map of 2 starts with
            # EXT1) it is an import that fails, like text's own words. Computed names act.
            acted = not self._after_fork or detail.startswith(DECODED_NAME)
            self._trial_acted = self._trial_acted or (acted and not op.name.startswith("EXT"))
        self._add(RULE_UNRESOLVED, Severity.CRITICAL,
                  f"import whose name is computed at load time ({detail}) at offset {op.pos}", detail)

    def on_call(self, func: Value, args: Value, op: Op) -> None:
        self.ran_code = True
        if isinstance(func, GlobalRef) and calls.quiet_call(func, args):
            return  # judge_call finds nothing here: every tensor rebuild of a state dict
        known = isinstance(func, GlobalRef) and calls.vouched_call(func, op.name)
        if not (known or self._after_fork):
            self._trial_acted = True  # a lenient walk that reaches a real call is kept even if it breaks
        self._report(calls.judge_call(func, args, f"{op.name} at offset {op.pos}", op.name))

    def on_build(self, target: Value, state: Value, op: Op) -> None:
        self.ran_code = True
        self._report(calls.judge_build(target, state, f"BUILD at offset {op.pos}"))

    def on_mutation(self, target: Value, values: Value, op: Op) -> None:
        self.ran_code = True
        self._report(calls.judge_mutation(target, values, f"{op.name} at offset {op.pos}"))
        fault = torch_trust.non_dict_target(target) if self.torch_load and op.name.startswith("SETITEM") else None
        if fault is not None:
            self._add(RULE_SETITEM, Severity.CRITICAL,
                      f"{op.name} at offset {op.pos} sets items on {fault}: torch.load's weights_only unpickler "
                      "did so unchecked before torch 2.10 (CVE-2026-24747, memory corruption)",
                      f"{op.name}@{op.pos} on {fault}")

    def on_persistent(self, pid: Value, pos: int) -> None:
        if self.torch_load and self._depth == 0 and len(self.result.storages) < self.limits.max_archive_members:
            ref = torch_trust.storage_ref(pid, pos)
            if ref is not None:
                self.result.storages.append(ref)

    def _report(self, found: list[calls.CallFinding]) -> None:
        for item in found:
            if self._after_fork and item.severity is Severity.CRITICAL:
                self._trial_acted = True  # e.g. a suspicious call in what only pickle.load reads
            self._add(item.rule, item.severity, item.message, item.evidence)

    def _add(self, rule: str, severity: Severity, message: str, evidence: str, tagged: bool = False) -> None:
        if (rule, evidence) in self._seen:
            return
        self._seen.add((rule, evidence))
        if self._reading and not tagged:
            evidence = f"{self._reading}: {evidence}"  # the readings diverged: say which one saw it
        sink = self.sink if self._trial is None else self._trial
        sink.add(rule, severity, message, member=self.member, evidence=evidence[:300])



def _as_bytes(arg: object) -> bytes | None:
    if isinstance(arg, bytes):
        return arg
    if isinstance(arg, str):
        try:
            return arg.encode("latin-1")  # protocol-0 text: the unpickler reads it as latin-1 bytes
        except UnicodeEncodeError:
            return arg.encode("utf-8", "surrogatepass")
    return None
