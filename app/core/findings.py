"""Findings and per-file scan outcomes: values, never exceptions.

Also what a rule is (RuleInfo): its id, severity, meaning and kind (RuleKind), declared once where the
scanner or pipeline defines it; `hfvet checks` lists them and policies classify findings by kind.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from app.core.tensor_layout import TensorLayout


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
LIMIT_EXCEEDED = "limit-exceeded"  # a scan limit was reached; the rest was not vetted


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
    layout: TensorLayout | None = None  # a safetensors file's tensor layout, from a header read whole

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


class RuleKind(enum.StrEnum):
    """What a rule's finding means to a trust policy, declared with the rule (guarddog's `identifies`).

    Policies classify findings by kind (`f.kind`), so a new rule counts as soon as it declares one.
    Each rule has exactly one kind; the kinds split the rules the way the shipped policies' hand-kept
    id lists did, so each of those lists is one kind or a union of kinds (KIND_MEANINGS says which).
    """

    MALFORMED_WEIGHTS = "malformed-weights"
    MALFORMED_CONTAINER = "malformed-container"
    MALFORMED = "malformed"
    INCOMPLETE = "incomplete"
    UNREAD = "unread"
    PARTIAL = "partial"
    PICKLE_CALL = "pickle-call"
    EXECUTION = "execution"
    DANGEROUS_CAPABILITY = "dangerous-capability"
    DANGEROUS_CODE = "dangerous-code"
    REMOTE_CODE = "remote-code"
    INSTALL = "install"
    REFERENCE = "reference"
    IDENTITY = "identity"
    NOTE = "note"


# The policies' documentation table (policies/README.md); a test keeps it complete.
KIND_MEANINGS: dict[RuleKind, str] = {
    RuleKind.MALFORMED_WEIGHTS: "A weights file a loader rejects or reads differently (safetensors, GGUF, a "
    "broken pickle stream).",
    RuleKind.MALFORMED_CONTAINER: "An archive that tools may read differently (bad headers, duplicate members); "
    "malformed weights when the file holds weights (`weights_formats`).",
    RuleKind.MALFORMED: "Another file that does not parse as its format, or reads two ways (a polyglot, an "
    "unsafe member name, a parser differential).",
    RuleKind.INCOMPLETE: "The file was not (fully) looked at: a scan or read error, a limit, an unreadable "
    "archive member, no scanner for it.",
    RuleKind.UNREAD: "A load would read content the scan could not read: a container it could not open, a side "
    "file joblib opens. With `incomplete`: not fully vetted.",
    RuleKind.PARTIAL: "Part of a file was not read (the vet's deadline, a scanner's cap, a config archive), "
    "judged like any finding of its severity.",
    RuleKind.PICKLE_CALL: "A load calls a callable no allowlist vouches for (dynamic or suspicious call).",
    RuleKind.EXECUTION: "A load runs, reads or writes something on its own: a pickle global or call, a graph "
    "op, a template, a payload pattern.",
    RuleKind.DANGEROUS_CAPABILITY: "Runs or fetches code outside the weights: executables, downloads, "
    "installs from a source nobody vetted, Keras Lambda and loading layers.",
    RuleKind.DANGEROUS_CODE: "Code a runtime runs, with a dangerous capability (remote code that spawns or "
    "execs, auto_map into another repo, a start-up hook): both `remote-code` and `dangerous-capability`.",
    RuleKind.REMOTE_CODE: "The repo's own code, which a runtime runs on load (auto_map, handler.py, custom "
    "components, Python in archives).",
    RuleKind.INSTALL: "Code that `pip install` or a runtime's install step runs, or an official installer.",
    RuleKind.REFERENCE: "Another repo or link the repo names.",
    RuleKind.IDENTITY: "Who publishes the repo: its hub identity changed, or its vendor signature does not check "
    "out (docs/provenance.md).",
    RuleKind.NOTE: "Informational: what was read (headers, chat templates, the load closure, symlinks).",
}


@dataclass(frozen=True)
class RuleInfo:
    """What a scanner can report: feeds the README's generated check list and the policy's `f.kind`."""

    id: str
    severity: Severity
    description: str
    kind: RuleKind

    @classmethod
    def scan_error(cls, description: str) -> RuleInfo:
        """The scanner could not finish (ScanOutcome.failed emits it)."""
        return cls(SCAN_ERROR, Severity.HIGH, description, RuleKind.INCOMPLETE)

    @classmethod
    def limit(cls, description: str) -> RuleInfo:
        """A scan limit was reached: the rest was not vetted."""
        return cls(LIMIT_EXCEEDED, Severity.HIGH, description, RuleKind.INCOMPLETE)


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
