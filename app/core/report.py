"""The vet report: the contract of DESIGN §6.2, as plain values (JSON in `report_json`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.closure import ClosureItem
from app.core.findings import Finding
from app.core.lineage_facts import Lineage
from app.core.repo_refs import RepoReference
from app.core.signature import SignatureCheck
from app.core.tensor_layout import TensorLayout
from app.core.verdict import Decision, Verdict


@dataclass(frozen=True)
class FileReport:
    path: str
    size: int
    sha256: str | None
    blob_id: str | None
    format: str
    scanned: bool  # every scanner that looked finished, and at least one looked
    # Each corroborating peer that handles the file: "ran: <why>" or "skipped: clean-walk" (docs/engines.md).
    engines: dict[str, str] = field(default_factory=dict)
    # Bytes hfvet read of this file while vetting it (each byte once); None in reports from before it was kept.
    bytes_read: int | None = None
    # A safetensors file's tensor layout (app.core.tensor_layout); None for other files and older reports.
    layout: TensorLayout | None = None


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
    references: tuple[RepoReference, ...] = ()  # other repos it loads or tells users to load
    closure: tuple[ClosureItem, ...] = ()  # what each runtime would import, run, install and fetch
    signature: SignatureCheck | None = None  # the vendor signature check; None: not run (older reports)

    @property
    def verdict(self) -> Verdict:
        return self.decision.verdict

    @property
    def lineage(self) -> Lineage | None:
        """What the vet found of the commit's lineage (mirror, base claim), as its policy saw it."""
        return self.decision.lineage
