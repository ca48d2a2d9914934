"""Whether the corroborating peers (picklescan, modelscan) run on a file, and why (docs/engines.md).

``auto`` skips them only where their findings cannot matter: hfvet's own engine walked the file
completely and said nothing at all (so every import it met is on its allowlist, nothing was
broken, truncated, trailing or over a limit), no other scanner flagged it (medium or above: the
binary checks' zip tricks are high; a partial YARA pass of a big file is low), the file has one
reading only, and it is a format whose peer checks are exactly the pickles hfvet walked. Anything
else, and ``always``, runs them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Literal

from app.core.findings import Finding, ScanOutcome, Severity, Status
from app.core.formats import zip_reader
from app.core.formats.detect import Format
from app.core.formats.streams import CorruptStream
from app.core.ports import Blob

PeersMode = Literal["always", "auto"]
PEERS_MODES: tuple[PeersMode, ...] = ("always", "auto")
RAN = "ran"
SKIPPED_CLEAN = "skipped: clean-walk"
# Formats where what the peers check is the pickles hfvet's engine walks, and nothing else
# (numpy, 7z, keras and HDF5 files are always corroborated: the peers read those their own way).
SKIPPABLE_FORMATS = frozenset({Format.PICKLE, Format.TORCH_LEGACY, Format.PYTORCH_ZIP})
# Zip members the peers unpickle by name whatever they hold, while hfvet's engine sniffs them
# (it unpickles by name only .pkl/.pickle, as torch.load does): their runs could differ.
_PEER_ONLY_NAMES = (".joblib", ".dill", ".dat", ".data", ".npy")


def peer_decision(
    mode: PeersMode,
    fmt: str,
    own: ScanOutcome | None,
    findings: Sequence[Finding],
    readings: int,
    blob: Blob,
) -> str:
    """``ran: <why>`` or ``skipped: clean-walk`` for one peer on one file.

    ``own``: hfvet's engine's outcome on the file; ``findings``: every other scanner's so far;
    ``readings``: how many ways loaders read the file (more than one: a polyglot).
    """
    if mode == "always":
        return f"{RAN}: HFVET_PEERS=always"
    reason = _why_run(fmt, own, findings, readings, blob)
    return SKIPPED_CLEAN if reason is None else f"{RAN}: {reason}"


def _why_run(fmt: str, own: ScanOutcome | None, findings: Sequence[Finding], readings: int,
             blob: Blob) -> str | None:
    if fmt not in SKIPPABLE_FORMATS:
        return f"{fmt} files are always corroborated"
    if own is None or own.status is not Status.SCANNED:
        return "hfvet's engine did not walk the file completely"
    if own.findings:
        return "hfvet's engine reported findings"
    if any(f.severity > Severity.LOW for f in findings):
        return "another scanner flagged the file"
    if readings > 1:
        return "loaders read the file in more than one way"
    if fmt == Format.PYTORCH_ZIP and _peer_only_members(blob):
        return "the peers unpickle members by name that hfvet's engine only sniffs"
    return None


def _peer_only_members(blob: Blob) -> bool:
    try:
        members = zip_reader.read_directory(blob)  # parsed already by the sniffer and the walk
    except CorruptStream:
        return True
    return any(
        not m.is_dir and not zip_reader.is_torch_storage(m.name)
        and posixpath.basename(m.name.lower()).endswith(_PEER_ONLY_NAMES)
        for m in members
    )
