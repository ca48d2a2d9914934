"""What one reading of a pickle stream knows while it walks: the result so far, the findings it
already added, the lenient trial, the joblib fork's bookkeeping. One ``WalkState`` is shared by
the parts of the analyzer (``analysis`` drives the walk, ``load_events`` judges what the machine
reports, ``joblib_reading`` reads joblib's wrappers, ``fast_loop`` runs the common opcodes), so
none of them reaches into another's attributes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.findings import FindingSink, Severity
from app.core.limits import Limits
from app.core.scanners.pickle_engine import nested, torch_trust
from app.core.scanners.pickle_engine.values import Value

RULE_LIMIT = "limit-exceeded"


@dataclass(frozen=True)
class ReadMode:
    """How a loader reads the stream (see ``analysis.analyze_pickles`` for each field)."""

    lenient: bool = False  # bytes that did not sniff as a pickle: findings count only if it acts
    loader_named: bool = False  # text a loader still unpickles by its name (``model.pkl``)
    joblib: bool = True  # joblib.load could open it: fork its reading at the first array wrapper
    joblib_compat: bool = False  # joblib's pre-0.10 unpickler: side files only


@dataclass
class PickleAnalysis:
    pickles: int = 0  # complete pickles walked (up to STOP)
    opcodes: int = 0
    imports: list[str] = field(default_factory=list)  # "module.name", first-seen order
    broken: bool = False
    limit_hit: bool = False
    value: Value | None = None  # what the last complete top-level pickle returns (its STOP operand)
    storages: list[torch_trust.StorageRef] = field(default_factory=list)  # torch.load readings only


@dataclass(eq=False)
class WalkState:
    sink: FindingSink
    limits: Limits
    member: str | None
    mode: ReadMode = ReadMode()
    torch_load: bool = False  # torch.load's unpickler reads this stream (storages, SETITEM targets)
    nesting: tuple[nested.NestedBudget, int] | None = None  # shared budget of nested pickles, this depth
    result: PickleAnalysis = field(default_factory=PickleAnalysis)
    seen: set[tuple[str, str]] = field(default_factory=set)  # (rule, evidence) already added
    imported: set[str] = field(default_factory=set)
    depth: int = 0  # joblib object arrays: nested plain pickles on the same stream
    trial: FindingSink | None = None  # lenient findings, held back until settled
    trial_counts: bool = False  # the lenient part showed an import or a limit: keep its findings
    trial_acted: bool = False  # ... and a call or a dangerous or computed import: kept even if it breaks
    ran_code: bool = False  # an import, call or BUILD a loader would have executed, so far
    joblib_rules: bool = False  # this state is the joblib reading: wrappers read array data
    reading: str = ""  # once the readings diverge: which one this state is
    wrapper_attrs: dict[int, dict[str, Value]] = field(default_factory=dict)
    frame_end: int = -1  # where the last FRAME ends (stream offset)
    # The plain reading after a joblib fork reads joblib's array bytes and nested pickles as
    # opcodes: its findings count only if it acts on what it read itself (see joblib_reading.fresh_import).
    after_fork: bool = False
    recent: list[tuple[str, object]] = field(default_factory=list)  # after the fork: the last opcodes
    fresh_memo: set[int] = field(default_factory=set)  # after the fork: memo slots written since

    def add(self, rule: str, severity: Severity, message: str, evidence: str, tagged: bool = False) -> None:
        """A finding, once per (rule, evidence); held back while a lenient trial is open."""
        if (rule, evidence) in self.seen:
            return
        self.seen.add((rule, evidence))
        if self.reading and not tagged:
            evidence = f"{self.reading}: {evidence}"  # the readings diverged: say which one saw it
        sink = self.sink if self.trial is None else self.trial
        sink.add(rule, severity, message, member=self.member, evidence=evidence[:300])

    def begin_trial(self) -> None:
        if self.trial is None:
            self.trial = FindingSink(self.sink.path, self.sink.scanner)
            self.trial_counts = self.trial_acted = False  # judged on the lenient part alone

    def settle_trial(self) -> None:
        if self.trial is not None and self.trial_counts:
            self.sink.findings.extend(self.trial.findings)
        self.trial = None

    def note_limit(self, message: str, evidence: str) -> None:
        """A limit stopped part of the walk before it could tell: never quiet, even in a lenient walk."""
        self.trial_counts = True
        self.add(RULE_LIMIT, Severity.HIGH, message, evidence)
