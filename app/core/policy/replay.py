"""What-if: replay stored reports under two policies and say which verdicts change, and why."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from app.core import report_json
from app.core.policy.engine import evaluate
from app.core.policy.errors import PolicyError
from app.core.policy.facts import PolicyFacts, facts_from_report_dict
from app.core.policy.loader import LoadedPolicy
from app.core.verdict import Decision


@dataclass(frozen=True)
class StoredReport:
    source: str
    facts: PolicyFacts
    data: dict[str, Any]  # the report as stored: its recorded verdict, reasons and policy


@dataclass(frozen=True)
class Replay:
    report: StoredReport
    old: Decision
    new: Decision

    @property
    def changed(self) -> bool:
        return self.old.verdict is not self.new.verdict

    def responsible(self) -> list[str]:
        """Reasons that appear, disappear or change decision between the two policies."""
        before = {r.rule: r.decision.value for r in reversed(self.old.reasons)}
        after = {r.rule: r.decision.value for r in reversed(self.new.reasons)}
        notes = [f"+{rule} ({d})" for rule, d in after.items() if rule not in before]
        notes += [f"-{rule} ({d})" for rule, d in before.items() if rule not in after]
        notes += [f"~{rule} ({before[rule]} -> {d})" for rule, d in after.items()
                  if rule in before and before[rule] != d]
        return sorted(notes, key=lambda n: n[1:])


def read_report(path: Path) -> StoredReport:
    try:
        data = report_json.read(path)
    except report_json.ReportFormatError as exc:
        raise PolicyError.single(str(path), None, str(exc).removeprefix(f"{path}: ")) from exc
    return stored_report(data, str(path))


def stored_report(data: dict[str, Any], source: str) -> StoredReport:
    """A report document (from a file or the store) ready to replay; PolicyError if malformed."""
    facts = facts_from_report_dict(data, source)  # rejects anything but a report mapping
    try:
        RecordedOutcome.model_validate(data)
    except ValidationError as exc:
        raise PolicyError.single(source, None, f"malformed report: {exc}") from exc
    return StoredReport(source, facts, dict(data))


class RecordedOutcome(BaseModel):
    """The recorded outcome `policy explain` prints: wrong shapes are an error, not a crash."""

    verdict: str | None = None
    reasons: list[dict[str, Any]] | None = None
    policy: dict[str, Any] | None = None


def report_files(paths: Iterable[Path]) -> list[Path]:
    """Files as given; folders contribute their *.json files, in name order."""
    found: list[Path] = []
    for path in paths:
        found.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    return found


def replay(old: LoadedPolicy, new: LoadedPolicy, reports: Iterable[StoredReport],
           *, today: date | None = None) -> list[Replay]:
    return [Replay(r, evaluate(old, r.facts, today=today), evaluate(new, r.facts, today=today))
            for r in reports]


def policy_changes(old: LoadedPolicy, new: LoadedPolicy) -> list[str]:
    """A reviewer's summary of what differs between two policies, rule by rule."""
    before = {r.id: r for r in old.model.rules}
    after = {r.id: r for r in new.model.rules}
    notes = [f"+rule {i} ({r.decision})" for i, r in after.items() if i not in before]
    notes += [f"-rule {i} ({r.decision})" for i, r in before.items() if i not in after]
    notes += [f"~rule {i}" for i, r in after.items() if i in before and before[i] != r]
    for label, a, b in _sections(old, new):
        if a != b:
            notes.append(f"~{label}")
    return notes


def _sections(old: LoadedPolicy, new: LoadedPolicy) -> list[tuple[str, object, object]]:
    o, n = old.model, new.model
    return [("tiers", o.tiers, n.tiers), ("lists", o.lists, n.lists), ("default", o.default, n.default),
            ("waivers", o.waivers, n.waivers), ("unsafe", o.unsafe, n.unsafe)]
