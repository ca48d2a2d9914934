"""The Scanner protocol: one scanner looks at one file through a byte-range Blob."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Protocol

from app.core.closure import ClosureItem
from app.core.findings import RuleInfo, ScanOutcome
from app.core.limits import Limits
from app.core.manifest import ManifestFile, RepoIdentity
from app.core.membudget import MemoryBudget, process_budget
from app.core.ports import Blob


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
