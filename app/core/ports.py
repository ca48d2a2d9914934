"""Every seam between the pure core and what plugs into it: sources, blobs, decisions, progress."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from app.core.findings import Finding
from app.core.manifest import Manifest
from app.core.report import FileReport
from app.core.signature import SignatureCheck
from app.core.verdict import Decision


class SourceError(Exception):
    """A source could not list or read something. Scanners turn it into a failed scan."""


class Source(Protocol):
    """Random access to the files of one repo at one pinned revision.

    Scanners only ever call ``read`` and ``size``; they never see a local path, so a
    Range-reading hub source and a local directory are interchangeable. ``size`` and ``read``
    raise ``SourceError`` for an entry the source lists but will not serve (a FIFO, a link out
    of the snapshot): listed, never silently dropped, and never taken for an empty file.
    """

    def manifest(self) -> Manifest: ...

    def size(self, path: str) -> int: ...

    def read(self, path: str, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes at ``offset`` (fewer only at end of file)."""
        ...

    @property
    def bytes_read(self) -> int:
        """Bytes actually fetched so far, for the report's stats."""
        ...


class Blob(Protocol):
    """A random-access byte view: a file of a Source, an archive member, bytes in memory."""

    @property
    def size(self) -> int: ...

    def read(self, offset: int, length: int) -> bytes: ...


# The verdict for one vet: (manifest, findings, per-file reports) -> decision. The policy engine makes one.
DecideFn = Callable[[Manifest, list[Finding], list[FileReport]], Decision]
# Called as each file finishes: (the file's report, bytes read so far).
ProgressFn = Callable[[FileReport, int], None]
# A check of the repo as a whole (its identity, its manifest), run before the decision.
RepoCheck = Callable[[Manifest], list[Finding]]
# The repo's vendor signature, checked before the scans (app.core.signature_step.py): reads only the
# signature and small non-LFS files through the Source, so its bytes count like any other.
SignatureStep = Callable[[Source, Manifest], SignatureCheck]


@runtime_checkable
class SignatureAwareDecide(Protocol):
    """A ``DecideFn`` that also judges the signature check (the policy engine's, ``make_decide``)."""

    def __call__(self, manifest: Manifest, findings: list[Finding], files: list[FileReport]) -> Decision: ...

    def with_signature(self, manifest: Manifest, findings: list[Finding], files: list[FileReport],
                       signature: SignatureCheck) -> Decision: ...
