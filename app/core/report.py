"""The vet report: the contract of DESIGN §6.2, as plain values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.findings import Finding, Severity
from app.core.verdict import Decision, Verdict


@dataclass(frozen=True)
class FileReport:
    path: str
    size: int
    sha256: str | None
    blob_id: str | None
    format: str
    scanned: bool  # every scanner that looked finished, and at least one looked


@dataclass(frozen=True)
class Stats:
    files: int
    repo_bytes: int
    bytes_read: int
    seconds: float


@dataclass(frozen=True)
class Report:
    repo: str | None
    revision: str | None
    decision: Decision
    findings: tuple[Finding, ...]
    files: tuple[FileReport, ...]
    stats: Stats
    scanners: dict[str, str] = field(default_factory=dict)
    identity: dict[str, Any] = field(default_factory=dict)

    @property
    def verdict(self) -> Verdict:
        return self.decision.verdict

    def to_dict(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "revision": self.revision,
            "verdict": self.verdict.value,
            "reasons": [
                {"rule": r.rule, "decision": r.decision.value, "message": r.message}
                for r in self.decision.reasons
            ],
            "policy": {"name": self.decision.policy.name, "sha256": self.decision.policy.sha256},
            "findings": [finding_to_dict(f) for f in self.findings],
            "files": [vars(f).copy() for f in self.files],
            "stats": vars(self.stats).copy(),
            "scanners": dict(self.scanners),
            "identity": dict(self.identity),
        }


def finding_to_dict(f: Finding) -> dict[str, Any]:
    return {
        "path": f.path,
        "member": f.member,
        "scanner": f.scanner,
        "rule": f.rule,
        "severity": f.severity.value,
        "message": f.message,
        "evidence": f.evidence,
    }


def finding_from_dict(d: dict[str, Any]) -> Finding:
    return Finding(
        path=d["path"],
        scanner=d["scanner"],
        rule=d["rule"],
        severity=Severity(d["severity"]),
        message=d["message"],
        member=d.get("member"),
        evidence=d.get("evidence"),
    )
