"""The Scanner protocol: one scanner looks at one file through a byte-range Blob.

Beside it, the optional abilities the pipeline looks for with ``isinstance`` (each ``runtime_checkable``):
``Preparing`` (imports its libraries once before the scan threads start), ``ReadsAs`` (reads a polyglot
file once more as each other format a loader reads it as) and ``Corroborating`` (a peer engine the
pipeline may skip after another engine's clean walk; it says itself whether it is wanted).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal, Protocol, runtime_checkable

from app.core.closure import ClosureItem
from app.core.findings import RuleInfo, ScanOutcome
from app.core.limits import Limits
from app.core.manifest import ManifestFile, RepoIdentity
from app.core.membudget import MemoryBudget, process_budget
from app.core.ports import Blob

# Whether corroborating peers run: ``always``, or ``auto`` (each ``Corroborating.wanted`` decides).
PeersMode = Literal["always", "auto"]
# What ``Corroborating.wanted`` answers starts with one of these: ``ran: <why>`` or ``skipped: <why>``.
RAN = "ran"
SKIPPED = "skipped"


@dataclass(frozen=True)
class ScanContext:
    """Everything a scanner may consult besides the file's own bytes."""

    file: ManifestFile
    blob: Blob
    limits: Limits
    identity: RepoIdentity
    all_files: tuple[ManifestFile, ...] = ()
    memory: MemoryBudget | None = None  # shared by all scan threads; None: the process-wide one
    # Whole bytes of another file of the repo (a helper module, pyproject.toml); None: not offered.
    read_other: Callable[[str], bytes] | None = None
    # Repo path -> the load-closure items of configs that name it as code a runtime imports, read once per
    # vet by the pipeline (app.core.loaders.loader_map.named_code); None: not computed (a lone scan).
    named_code: Mapping[str, tuple[ClosureItem, ...]] | None = None
    peers: PeersMode = "auto"  # for Corroborating scanners only
    readings: int = 1  # how many ways loaders read the file (more than one: a polyglot, see ReadsAs)

    def budget(self) -> MemoryBudget:
        """Where large in-memory buffers are reserved (see ``app.core.membudget``)."""
        return self.memory or process_budget(self.limits)


class Scanner(Protocol):
    name: ClassVar[str]
    rules: ClassVar[tuple[RuleInfo, ...]]  # every rule id it can emit, for docs

    def handles(self, file: ManifestFile) -> bool:
        """Whether this scanner looks at the file (decided from the sniffed format/path)."""
        ...

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        """Never raises for bad content: returns findings, failed or skipped."""
        ...

    def version(self) -> str:
        """Version string recorded in the report's ``scanners`` map."""
        ...


@runtime_checkable
class Preparing(Protocol):
    """A scanner that imports what it needs once, on the vet's thread, before the scan threads start."""

    def prepare(self) -> None:
        """Never raises: a failed import fails each scan closed instead."""
        ...


@runtime_checkable
class ReadsAs(Scanner, Protocol):
    """A scanner that reads a polyglot file once more as another format a loader reads it as."""

    def scan_reading(self, ctx: ScanContext, fmt: str) -> ScanOutcome:
        """The file read as ``fmt`` (not ``ctx.file.format``); never raises for bad content."""
        ...


@runtime_checkable
class Corroborating(Scanner, Protocol):
    """A peer engine whose findings corroborate another scanner's: the pipeline asks it before each file."""

    corroborates: ClassVar[str]  # the name of the scanner whose clean walks may make this one redundant

    def wanted(self, ctx: ScanContext, earlier: Sequence[ScanOutcome]) -> str:
        """``ran: <why>`` or ``skipped: <why>`` (``RAN``/``SKIPPED``) for this file. ``earlier``: the
        outcomes of the non-corroborating scanners that ran on it so far (the same for every peer)."""
        ...
