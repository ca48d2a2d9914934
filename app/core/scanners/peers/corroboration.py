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
import zipfile
import zlib
from collections.abc import Sequence

from app.core.findings import Finding, ScanOutcome, Severity, Status
from app.core.formats import zip_reader
from app.core.formats.detect import Format
from app.core.formats.streams import CorruptStream
from app.core.ports import Blob
from app.core.scanners.base import RAN, SKIPPED, PeersMode, ScanContext

SKIPPED_CLEAN = f"{SKIPPED}: clean-walk"
# Formats where what the peers check is the pickles hfvet's engine walks, and nothing else
# (numpy, 7z, keras and HDF5 files are always corroborated: the peers read those their own way).
SKIPPABLE_FORMATS = frozenset({Format.PICKLE, Format.TORCH_LEGACY, Format.PYTORCH_ZIP})
# Zip members the peers unpickle by name whatever they hold, while hfvet's engine sniffs them
# (it unpickles by name only .pkl/.pickle, as torch.load does): their runs could differ.
_PEER_ONLY_NAMES = (".joblib", ".dill", ".dat", ".data", ".npy")
_CRC_CHUNK = 1024 * 1024


def wanted(corroborates: str, ctx: ScanContext, earlier: Sequence[ScanOutcome]) -> str:
    """``Corroborating.wanted`` for a peer of the scanner named ``corroborates``: ``peer_decision`` on
    that engine's outcome and every other scanner's findings so far."""
    own = next((o for o in earlier if o.scanner == corroborates), None)
    others = [f for o in earlier if o.scanner != corroborates for f in o.findings]
    return peer_decision(ctx.peers, ctx.file.format, own, others, ctx.readings, ctx.blob)


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
    if fmt == Format.PYTORCH_ZIP:
        return _zip_reason(blob)
    return None


def _zip_reason(blob: Blob) -> str | None:
    try:
        infos, _comment = zip_reader.read_infos(blob)  # parsed already by the sniffer and the walk
    except CorruptStream:
        return "the zip directory does not parse"
    read = [i for i in infos if not i.is_dir() and not zip_reader.is_torch_storage(i.filename)]
    if any(posixpath.basename(i.filename.lower()).endswith(_PEER_ONLY_NAMES) for i in read):
        return "the peers unpickle members by name that hfvet's engine only sniffs"
    if not all(_reads_alike(blob, i) for i in read):
        return "a member zipfile would refuse (CRC, flags, names) where torch reads it"
    return None


def _reads_alike(blob: Blob, info: zipfile.ZipInfo) -> bool:
    """Whether zipfile (modelscan's reader) yields the member as torch does: stored, not flagged
    encrypted, the local name the same, the CRC right. The bytes are those hfvet's walk just read
    (the per-file read cache serves them again)."""
    member = zip_reader.ZipMember(info.filename, info.header_offset, info.compress_type, info.compress_size,
                                  info.file_size, False, info.orig_filename, info.flag_bits)
    if member.method != zip_reader.STORED or member.flags & zip_reader.ENCRYPTED:
        return False
    try:
        header = zip_reader.local_header(blob, member)
        if zip_reader.local_name(blob, header) != info.orig_filename:
            return False
        data = zip_reader.raw_blob(blob, member, header.data_offset)
        return _crc(data) == info.CRC
    except CorruptStream:
        return False


def _crc(blob: Blob) -> int:
    crc = 0
    for offset in range(0, blob.size, _CRC_CHUNK):
        crc = zlib.crc32(blob.read(offset, _CRC_CHUNK), crc)
    return crc
