"""hfvet's own pickle analysis: walk every opcode of every stacked pickle in a stream and
report what a loader would import, call or mutate. Nothing is ever unpickled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import BinaryIO

from app.core.findings import FindingSink, Severity
from app.core.formats.detect import looks_like_pickle
from app.core.formats.streams import CorruptStream
from app.core.limits import LimitExceeded, Limits, ReadBudgetExceeded
from app.core.scanners.pickle_engine import calls
from app.core.scanners.pickle_engine import joblib_format as pickle_joblib
from app.core.scanners.pickle_engine.catalog import Verdict, classify
from app.core.scanners.pickle_engine.machine import PickleMachine
from app.core.scanners.pickle_engine.reader import BrokenStream, Op, OpReader
from app.core.scanners.pickle_engine.values import OPAQUE, GlobalRef, Value

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

MAX_NESTED_PICKLES = 8  # joblib object arrays inside object arrays...
_SNIFF = 256
_IMPORTABLE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")  # "module.name" a loader could import

@dataclass
class PickleAnalysis:
    pickles: int = 0  # complete pickles walked (up to STOP)
    opcodes: int = 0
    imports: list[str] = field(default_factory=list)  # "module.name", first-seen order
    broken: bool = False
    limit_hit: bool = False


def analyze_pickles(
    stream: BinaryIO,
    sink: FindingSink,
    limits: Limits,
    member: str | None = None,
    max_pickles: int | None = None,
    lenient: bool = False,
    loader_named: bool = False,
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
    """
    analyzer = _Analyzer(sink, limits, member, loader_named)
    analyzer.run(OpReader(stream, limits.max_string_arg), max_pickles, lenient)
    return analyzer.result


class _Analyzer:
    def __init__(self, sink: FindingSink, limits: Limits, member: str | None, loader_named: bool = False) -> None:
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
        self._loader_named = loader_named

    def run(self, reader: OpReader, max_pickles: int | None, lenient: bool) -> None:
        if lenient:
            self._begin_trial()
        try:
            self._walk(reader, max_pickles)
        except (BrokenStream, CorruptStream) as exc:
            self.result.broken = True
            if self._text_lookalike(exc):
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
        machine = PickleMachine(self)
        while True:
            op = reader.next_op()
            if op is None:
                raise BrokenStream("stream ends before STOP", reader.pos)
            self.result.opcodes += 1
            if self.result.opcodes > self.limits.max_pickle_opcodes:
                raise LimitExceeded(f"more than {self.limits.max_pickle_opcodes} opcodes")
            if machine.step(op):
                return
            if machine.built is not None and pickle_joblib.is_array_wrapper(machine.built):
                self._skip_joblib_array(machine, reader, op)

    def _skip_joblib_array(self, machine: PickleMachine, reader: OpReader, op: Op) -> None:
        layout = pickle_joblib.array_layout(machine.built.state if machine.built else None)
        if layout is None:
            raise BrokenStream("joblib array data of unknown size", op.pos)
        if layout.has_object:
            self._nested_pickle(reader)
        else:
            if layout.padded:
                padding = reader.read_exact(1, "joblib alignment")[0]
                reader.skip(padding, "joblib alignment")
            reader.skip(layout.nbytes, "joblib array data")
        machine.stack[-1] = OPAQUE  # joblib swaps the wrapper for the array it read

    def _nested_pickle(self, reader: OpReader) -> None:
        if self._depth >= MAX_NESTED_PICKLES:
            raise LimitExceeded(f"joblib object arrays nested more than {MAX_NESTED_PICKLES} deep")
        self._depth += 1
        try:
            self._one_pickle(reader)
        finally:
            self._depth -= 1

    # -- Events: called by the machine
    def on_global(self, ref: GlobalRef, op: Op) -> None:
        dotted = ref.dotted
        if self._trial is not None and _IMPORTABLE.fullmatch(dotted):
            self._trial_counts = True
        if dotted not in self._imported:
            self._imported.add(dotted)
            self.result.imports.append(dotted)
        verdict = classify(ref.module, ref.name)
        if verdict.verdict is Verdict.DANGEROUS:
            self._trial_acted = True
            self._add(RULE_DANGEROUS, Severity.CRITICAL,
                      f"pickle imports {dotted}: {verdict.reason}", dotted)
        elif verdict.verdict is Verdict.UNKNOWN:
            self._add(RULE_UNKNOWN, Severity.MEDIUM,
                      f"unknown import {dotted}: not a global ordinary checkpoints use", dotted)

    def on_unresolved(self, detail: str, op: Op) -> None:
        if self._trial is not None:
            self._trial_counts = True
            # An extension code resolves through copyreg's registry, empty unless the loading
            # program filled it: in bytes that are not a pickle (a msgpack map of 2 starts with
            # EXT1) it is an import that fails, like text's own words. Computed names act.
            self._trial_acted = self._trial_acted or not op.name.startswith("EXT")
        self._add(RULE_UNRESOLVED, Severity.CRITICAL,
                  f"import whose name is computed at load time ({detail}) at offset {op.pos}", detail)

    def on_call(self, func: Value, args: Value, op: Op) -> None:
        if not (isinstance(func, GlobalRef) and classify(func.module, func.name).verdict is Verdict.SAFE):
            self._trial_acted = True  # a lenient walk that reaches a real call is kept even if it breaks
        self._report(calls.judge_call(func, args, f"{op.name} at offset {op.pos}"))

    def on_build(self, target: Value, state: Value, op: Op) -> None:
        self._report(calls.judge_build(target, state, f"BUILD at offset {op.pos}"))

    def on_mutation(self, target: Value, values: Value, op: Op) -> None:
        self._report(calls.judge_mutation(target, values, f"{op.name} at offset {op.pos}"))

    def _report(self, found: list[calls.CallFinding]) -> None:
        for item in found:
            self._add(item.rule, item.severity, item.message, item.evidence)

    def _add(self, rule: str, severity: Severity, message: str, evidence: str) -> None:
        if (rule, evidence) in self._seen:
            return
        self._seen.add((rule, evidence))
        sink = self.sink if self._trial is None else self._trial
        sink.add(rule, severity, message, member=self.member, evidence=evidence[:300])

