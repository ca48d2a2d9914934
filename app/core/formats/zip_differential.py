"""Two readings of one zip: CPython's ``zipfile`` (hfvet's walk, numpy, the peers) and miniz (``torch.load``).

torch.load opens a file as a zip only when it starts with a local header (``torch.serialization.
_is_zipfile``), then reads it through ``PyTorchStreamReader`` (``miniz_zip``). Where the two readers
disagree on a record torch reads, hfvet vetted one set of bytes and torch loads another:

- zipfile shifts every offset by the bytes it thinks were prepended ("concat" in
  ``ZipFile._RealGetContents``), miniz never does: two central directories in one file;
- zipfile takes the zip64 record just before the locator (``_EndRecData64``), miniz the one the
  locator points at; zipfile reads entries while the directory size lasts, miniz the entry count;
- zipfile gives up on a signature in the last 21 bytes, a corrupt extra field or a bad UTF-8
  name, miniz reads on; miniz's end-record search reaches ~4 KiB further back;
- miniz finds names case-insensitively, picks among equal names by its heap sort (zipfile's
  ``NameToInfo``: the last), reads a stored entry for its uncompressed size and a directory for nothing.

``compare`` returns the disagreements (names, and per record: local header, method, sizes, CRC,
bytes read) and the records torch would read whose bytes hfvet's walk did not, for the pickle
engine to walk as torch reads them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from app.core.formats.detect import Format, refine_zip
from app.core.formats.miniz_entries import MinizEntry, MinizError, MinizLimit
from app.core.formats.miniz_zip import TorchArchive
from app.core.formats.zip_reader import ZipMember, is_torch_storage
from app.core.limits import LimitExceeded
from app.core.ports import Blob

ZIP_LOCAL_MAGIC = b"PK\x03\x04"
# Records torch.load / torch.jit.load read by name (inline_container.cc, torch/serialization.py _load).
TORCH_RECORDS = ("data.pkl", "constants.pkl", "byteorder", "version", ".data/version",
                 ".data/serialization_id", ".format_version", ".storage_alignment")
_STORAGE_RECORD = re.compile(rb"^data/\d+$")  # torch reads these as raw storage bytes
_SHOWN = 6  # differences spelled out in the evidence; the rest are counted


@dataclass(frozen=True)
class Differential:
    differences: tuple[str, ...]
    torch_only: tuple[MinizEntry, ...]  # records torch would read whose bytes the walk did not read

    @property
    def message(self) -> str:
        return ("torch.load (PyTorch's miniz reader) and zipfile (hfvet, numpy, peer scanners) read this zip "
                f"differently: {self.differences[0]}" + (f" (+{len(self.differences) - 1} more)"
                                                        if len(self.differences) > 1 else ""))

    @property
    def evidence(self) -> str:
        shown = "; ".join(self.differences[:_SHOWN])
        rest = len(self.differences) - _SHOWN
        return shown + (f"; and {rest} more" if rest > 0 else "")


@dataclass(frozen=True)
class _Read:
    """What one reader takes for one record: where, how, how much."""

    header_offset: int
    method: int
    bytes_read: int
    size: int
    crc: int

    def describe(self) -> str:
        return (f"local header at {self.header_offset}, method {self.method}, {self.bytes_read} bytes read, "
                f"size {self.size}, crc {self.crc:08x}")


def compare(blob: Blob, members: list[ZipMember] | None, zipfile_error: str | None) -> Differential | None:
    """The disagreements, or None when they agree or torch.load would not load this zip at all.

    ``members``: zipfile's entries (None when zipfile could not read the directory: ``zipfile_error``).
    """
    if blob.read(0, len(ZIP_LOCAL_MAGIC)) != ZIP_LOCAL_MAGIC:
        return None  # torch.load reads it as a legacy file, not a zip
    try:
        torch = TorchArchive.open(blob, needs="data.pkl")
    except MinizLimit as exc:
        raise LimitExceeded(f"torch.load's reading of the zip: {exc}") from None
    except MinizError:
        return None  # miniz refuses it: torch.load fails before unpickling anything
    data = torch.record("data.pkl")
    if data is None or not data.extractable:
        return None
    if members is None:
        shown = f"zipfile cannot read it ({zipfile_error}), miniz reads {len(torch.archive.entries)} entries"
        return Differential((shown,), _unread(torch, set()))
    same = _same_entries(torch, members)
    differences = ([] if same else _name_differences(torch, members)) + _record_differences(torch, members, same)
    if not differences:
        return None
    return Differential(tuple(differences), _unread(torch, _walked(members)))


def _name_differences(torch: TorchArchive, members: list[ZipMember]) -> list[str]:
    by_miniz = Counter(e.name for e in torch.archive.entries)
    by_zipfile = Counter(m.raw_bytes for m in members)
    found = []
    if by_miniz - by_zipfile:
        found.append(f"entries only miniz reads: {_names(by_miniz - by_zipfile)}")
    if by_zipfile - by_miniz:
        found.append(f"entries only zipfile reads: {_names(by_zipfile - by_miniz)}")
    return found


def _names(names: Counter[bytes]) -> str:
    shown = sorted(names.elements())
    return ", ".join(repr(n.decode("utf-8", "replace")) for n in shown[:_SHOWN]) + (
        f" (+{len(shown) - _SHOWN})" if len(shown) > _SHOWN else "")


def _same_entries(torch: TorchArchive, members: list[ZipMember]) -> bool:
    """Both readers list the same entries, in the same order, each read alike, no name cut at a NUL
    or equal to another but for case: then a record named after an entry resolves to that entry in
    both, and only the fixed record names (which may match a case variant) need looking up."""
    entries = torch.archive.entries
    if len(entries) != len(members) or torch.archive.has_ties:
        return False
    return all(e.name == m.raw_bytes and b"\0" not in e.name and _miniz_read(e) == _zipfile_read(m)
               for e, m in zip(entries, members, strict=True))


def _record_differences(torch: TorchArchive, members: list[ZipMember], same: bool) -> list[str]:
    by_name = {_zipfile_key(m): m for m in members}  # a later duplicate wins, as in NameToInfo
    prefix = torch.prefix
    records = {r.encode() for r in TORCH_RECORDS}
    if not same:
        records |= set(torch.record_keys()) | {key[len(prefix):] for key in by_name if key.startswith(prefix)}
    found = []
    for record in sorted(records):
        entry, member = torch.archive.locate(prefix + record), by_name.get(prefix + record)
        found += _record_difference(record.decode("utf-8", "replace"), entry, member)
    return found


def _record_difference(record: str, entry: MinizEntry | None, member: ZipMember | None) -> list[str]:
    if entry is None:
        return [] if member is None else [f"record {record!r}: zipfile reads {member.raw_name!r}, miniz finds "
                                          "no such record"]
    theirs = _miniz_read(entry)
    if member is None:
        return [f"record {record!r}: miniz reads entry {entry.name!r} ({theirs.describe()}), zipfile has no "
                "entry of that name"]
    ours = _zipfile_read(member)
    if ours == theirs:
        return []
    return [f"record {record!r}: zipfile reads {ours.describe()}; miniz reads entry #{entry.index} "
            f"{entry.name!r}, {theirs.describe()}"]


def _zipfile_key(member: ZipMember) -> bytes:
    return member.raw_bytes.split(b"\0", 1)[0]  # zipfile cuts names at the first NUL


def _zipfile_read(member: ZipMember) -> _Read:
    length = 0 if member.is_dir else member.compressed_size
    return _Read(member.header_offset, member.method, length, member.size, member.crc)


def _miniz_read(entry: MinizEntry) -> _Read:
    return _Read(entry.header_offset, entry.method, entry.bytes_read, entry.size, entry.crc)


def _walked(members: list[ZipMember]) -> set[tuple[int, int, int]]:
    """The byte ranges hfvet's pickle walk read (see ``ContainerWalker._zip``)."""
    torch_layout = refine_zip([m.name for m in members]) == Format.PYTORCH_ZIP
    return {(m.header_offset, m.method, m.compressed_size) for m in members
            if not (m.is_dir or (torch_layout and is_torch_storage(m.name)))}


def _unread(torch: TorchArchive, walked: set[tuple[int, int, int]]) -> tuple[MinizEntry, ...]:
    """Records torch would read (not raw storages) whose bytes, as miniz reads them, were not walked."""
    chosen: dict[int, MinizEntry] = {}
    for record in torch.record_keys():
        entry = torch.archive.locate(torch.prefix + record)
        if entry is None or _STORAGE_RECORD.match(record) or not entry.extractable or entry.bytes_read == 0:
            continue
        if (entry.header_offset, entry.method, entry.bytes_read) not in walked:
            chosen[entry.index] = entry
    return tuple(chosen[i] for i in sorted(chosen))


def as_member(entry: MinizEntry) -> ZipMember:
    """The entry as hfvet's zip reader opens members, spanning exactly the bytes miniz reads."""
    name = "miniz:" + entry.name.decode("utf-8", "replace")
    return ZipMember(name, entry.header_offset, entry.method, entry.bytes_read, entry.size, False, name,
                     entry.flags, entry.crc)
