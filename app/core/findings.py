"""Findings and per-file scan outcomes: values, never exceptions."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(enum.Enum):
    INFO = "info"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _RANKS[self]

    def __lt__(self, other: Severity) -> bool:
        return self.rank < other.rank


_RANKS = {s: i for i, s in enumerate(Severity)}


@dataclass(frozen=True)
class Finding:
    """One observation about one file (or one member of an archive inside it)."""

    path: str
    scanner: str
    rule: str
    severity: Severity
    message: str
    member: str | None = None
    evidence: str | None = None
    # Where code would come from (``github.com/owner/repo``, ``nvcr.io/nim/x``, an index host), so
    # the trust policy can judge it by owner; None when the finding names no such source.
    source: str | None = None


SCAN_ERROR = "scan-error"  # a scanner could not finish; emitted through ScanOutcome.failed


class Status(enum.Enum):
    """How a scanner's pass over a file ended."""

    SCANNED = "scanned"
    FAILED = "failed"  # the scanner could not finish: fail closed
    SKIPPED = "skipped"  # the scanner chose not to look (reason in detail)


@dataclass(frozen=True)
class ScanOutcome:
    scanner: str
    path: str
    status: Status
    findings: tuple[Finding, ...] = ()
    detail: str | None = None

    @classmethod
    def scanned(cls, scanner: str, path: str, findings: list[Finding]) -> ScanOutcome:
        return cls(scanner, path, Status.SCANNED, tuple(findings))

    @classmethod
    def failed(
        cls, scanner: str, path: str, detail: str, findings: list[Finding] | None = None
    ) -> ScanOutcome:
        """A failed scan keeps what it found before failing, plus a high finding."""
        error = Finding(path, scanner, SCAN_ERROR, Severity.HIGH, f"{scanner} could not scan: {detail}")
        return cls(scanner, path, Status.FAILED, (*(findings or []), error), detail)

    @classmethod
    def skipped(cls, scanner: str, path: str, detail: str) -> ScanOutcome:
        return cls(scanner, path, Status.SKIPPED, (), detail)


@dataclass(frozen=True)
class RuleInfo:
    """What a scanner can report: feeds the README's generated check list."""

    id: str
    severity: Severity
    description: str


@dataclass
class FindingSink:
    """Collects findings for one file while a scanner walks it."""

    path: str
    scanner: str
    findings: list[Finding] = field(default_factory=list)

    def add(
        self,
        rule: str,
        severity: Severity,
        message: str,
        *,
        member: str | None = None,
        evidence: str | None = None,
        source: str | None = None,
    ) -> None:
        self.findings.append(
            Finding(self.path, self.scanner, rule, severity, message, member, evidence, source)
        )
