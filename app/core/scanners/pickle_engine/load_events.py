"""What a load would do, judged as the walk meets it: the ``machine.Events`` of the analyzer.

The machine reports imports, calls, BUILDs, mutations and persistent ids; the opcode loops
(``analysis`` and ``fast_loop``) report constants that may hold a pickle themselves, which are
walked as nested pickles through the ``NestedWalk`` the analyzer hands in. Findings go to the
``WalkState``'s ``add``; a lenient walk's trial is told whether what it saw counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from app.core.findings import FindingSink, Severity
from app.core.limits import LimitExceeded, Limits
from app.core.scanners.pickle_engine import calls, joblib_reading, nested, torch_trust
from app.core.scanners.pickle_engine.catalog import Verdict, classify
from app.core.scanners.pickle_engine.reader import SKIPPED, Op, OpReader
from app.core.scanners.pickle_engine.values import Const, GlobalRef, Value
from app.core.scanners.pickle_engine.walk_state import WalkState

RULE_DANGEROUS = "pickle-dangerous-global"
RULE_UNRESOLVED = "pickle-unresolved-global"
RULE_UNKNOWN = "pickle-unknown-global"

_IMPORTABLE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")  # "module.name" a loader could import

# Walks the pickle ``data`` nested in a constant, leniently, into ``sink`` (``analysis`` provides it).
NestedWalk = Callable[[bytes, FindingSink, Limits, str, tuple[nested.NestedBudget, int]], object]


class LoadEvents:
    def __init__(self, state: WalkState, nested_walk: NestedWalk) -> None:
        self.state = state
        self._nested_walk = nested_walk

    # -- Events the machine reports
    def on_global(self, ref: GlobalRef, op: Op) -> None:
        state = self.state
        state.ran_code = True  # find_class imports the module
        dotted = ref.dotted
        if state.trial is not None and _IMPORTABLE.fullmatch(dotted):
            state.trial_counts = True
        if dotted not in state.imported:
            state.imported.add(dotted)
            state.result.imports.append(dotted)
        verdict = classify(ref.module, ref.name)
        fresh = state.after_fork and (op.name in ("GLOBAL", "INST") or joblib_reading.fresh_import(state))
        if fresh and verdict.verdict is not Verdict.SAFE:
            state.trial_acted = True  # a name the plain-only bytes wrote themselves
        if verdict.verdict is Verdict.DANGEROUS:
            state.trial_acted = True
            state.add(RULE_DANGEROUS, Severity.CRITICAL, f"pickle imports {dotted}: {verdict.reason}", dotted)
        elif verdict.verdict is Verdict.UNKNOWN:
            state.add(RULE_UNKNOWN, Severity.MEDIUM,
                      f"unknown import {dotted}: not a global ordinary checkpoints use", dotted)

    def on_unresolved(self, detail: str, op: Op) -> None:
        state = self.state
        state.ran_code = True
        if state.trial is not None:
            state.trial_counts = True
            # An extension code resolves through copyreg's registry, empty unless the loading
            # program filled it: in bytes that are not a pickle (a msgpack map of 2 starts with
            # EXT1) it is an import that fails, like text's own words. Computed names act.
            acted = not state.after_fork or detail.startswith(joblib_reading.DECODED_NAME)
            state.trial_acted = state.trial_acted or (acted and not op.name.startswith("EXT"))
        state.add(RULE_UNRESOLVED, Severity.CRITICAL,
                  f"import whose name is computed at load time ({detail}) at offset {op.pos}", detail)

    def on_call(self, func: Value, args: Value, op: Op) -> None:
        state = self.state
        state.ran_code = True
        if isinstance(func, GlobalRef) and calls.quiet_call(func, args):
            return  # judge_call finds nothing here: every tensor rebuild of a state dict
        known = isinstance(func, GlobalRef) and calls.vouched_call(func, op.name)
        if not (known or state.after_fork):
            state.trial_acted = True  # a lenient walk that reaches a real call is kept even if it breaks
        self._report(calls.judge_call(func, args, f"{op.name} at offset {op.pos}", op.name))

    def on_build(self, target: Value, state: Value, op: Op) -> None:
        self.state.ran_code = True
        self._report(calls.judge_build(target, state, f"BUILD at offset {op.pos}"))

    def on_mutation(self, target: Value, values: Value, op: Op) -> None:
        state = self.state
        state.ran_code = True
        self._report(calls.judge_mutation(target, values, f"{op.name} at offset {op.pos}"))
        fault = torch_trust.non_dict_target(target) if state.torch_load and op.name.startswith("SETITEM") else None
        if fault is not None:
            state.add(torch_trust.RULE_SETITEM, Severity.CRITICAL,
                      f"{op.name} at offset {op.pos} sets items on {fault}: torch.load's weights_only unpickler "
                      "did so unchecked before torch 2.10 (CVE-2026-24747, memory corruption)",
                      f"{op.name}@{op.pos} on {fault}")

    def on_persistent(self, pid: Value, pos: int) -> None:
        state = self.state
        if state.torch_load and state.depth == 0 and len(state.result.storages) < state.limits.max_archive_members:
            ref = torch_trust.storage_ref(pid, pos)
            if ref is not None:
                state.result.storages.append(ref)

    def _report(self, found: list[calls.CallFinding]) -> None:
        state = self.state
        for item in found:
            if state.after_fork and item.severity is Severity.CRITICAL:
                state.trial_acted = True  # e.g. a suspicious call in what only pickle.load reads
            state.add(item.rule, item.severity, item.message, item.evidence)

    # -- Events the opcode loops report: pickles inside constants
    def on_constant(self, op: Op, reader: OpReader) -> None:
        arg = op.arg
        if arg is SKIPPED:
            kept, unread = reader.take_long()
        elif isinstance(arg, (bytes, str)) and len(arg) >= nested.MIN_BYTES:  # most keys stop here, cheaply
            kept, unread = as_bytes(arg), 0
        else:
            return
        self._check_constant(op, kept, unread)

    def on_computed(self, op: Op, top: Value) -> None:
        """A constant the load computes (``bytes.join`` of pieces, a decode): checked like a written one."""
        if isinstance(top, Const) and top.computed and isinstance(top.value, (bytes, bytearray, str)):
            value = top.value
            if len(value) >= nested.MIN_BYTES:
                self._check_constant(op, bytes(value) if isinstance(value, bytearray) else as_bytes(value), 0)

    def _check_constant(self, op: Op, kept: bytes | None, unread: int) -> None:
        if unread:
            self._nested_limit(f"a {unread}-byte {op.name} constant at offset {op.pos} starts like a "
                               "(possibly encoded) pickle and is larger than a nested pickle is read; not vetted", op)
        if kept is None or len(kept) < nested.MIN_BYTES or self.state.nesting is None:
            return
        budget, depth = self.state.nesting
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
        self.state.note_limit(message, f"{op.name} at offset {op.pos}: {message}")

    def _inner(self, op: Op, how: str, data: bytes, budget: nested.NestedBudget, depth: int) -> None:
        state = self.state
        where = f"<{op.name} at offset {op.pos}, {how}>"
        member = where if state.member is None else f"{state.member}!{where}"
        inner = FindingSink(state.sink.path, state.sink.scanner)
        self._nested_walk(data, inner, state.limits, member, (budget, depth))
        sink = state.sink if state.trial is None else state.trial
        for found in inner.findings:
            state.trial_counts = True  # the inner walk kept it: it imported something
            state.trial_acted = state.trial_acted or found.severity.rank >= Severity.HIGH.rank
            sink.add(found.rule, found.severity, f"pickle nested in a constant ({how}): {found.message}",
                     member=found.member, evidence=found.evidence)


def as_bytes(arg: object) -> bytes | None:
    if isinstance(arg, bytes):
        return arg
    if isinstance(arg, str):
        try:
            return arg.encode("latin-1")  # protocol-0 text: the unpickler reads it as latin-1 bytes
        except UnicodeEncodeError:
            return arg.encode("utf-8", "surrogatepass")
    return None
