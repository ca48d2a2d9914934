"""Every reading a loader takes of one file, beyond the format its first bytes name.

The sniffed format is one reading; loaders attempt others, decided by the file's name or by
where they look for their magic:

- ``torch.load`` (what transformers calls for any ``.bin``, and users for ``.pt``/``.pth``/
  ``.ckpt``): a zip only if ``PK\\x03\\x04`` is at offset 0 (``_is_zipfile``); otherwise
  ``tarfile.open`` (the legacy tar layout), and when that raises ``TarError``, pickles from
  offset 0 (``_legacy_load``) — whatever the bytes are: safetensors, GGUF, npy...
- ``numpy.load`` (``.npy``/``.npz``): a zip if the zip magic starts the file, an array if the
  NPY magic does, otherwise (``allow_pickle=True``) ``pickle.load`` from offset 0.
- ``pickle.load`` / ``joblib.load`` (``.pkl``, ``.pickle``, ``.joblib``...): a pickle from offset 0
  (joblib first looks for a compressor's magic, which the sniffed format already follows).
- ``zipfile`` finds a zip by its end record, searched in the last 64 KiB, wherever the archive
  starts: a pickle with a zip appended is a pickle to torch and a zip to zipfile.

A reading that is well-formed in its own right (a pickle that runs to STOP and imports
something, a zip whose central directory parses) makes the file valid in two formats: a
polyglot, which no honest checkpoint is.
"""

from __future__ import annotations

import re
import tarfile
from dataclasses import dataclass

from app.core.formats.blobs import open_blob
from app.core.formats.detect import ZIP_KINDS, Format, could_start_pickle
from app.core.formats.pickle_sniff import imports_before_stop, sniff_text
from app.core.formats.streams import CorruptStream
from app.core.formats.zip_reader import ZipMember, read_directory
from app.core.ports import Blob

_TORCH_NAME = re.compile(r"\.(bin|pt|pth|ckpt|pt\.tar|pth\.tar)$", re.IGNORECASE)
_NUMPY_NAME = re.compile(r"\.(npy|npz)$", re.IGNORECASE)
_PICKLE_NAME = re.compile(r"\.(pkl|pickle|joblib|dill|sav)$", re.IGNORECASE)
# Formats the pickle scanner already walks as pickles from offset 0 (TEXT/UNKNOWN leniently).
_PICKLE_AT_ZERO = frozenset({Format.PICKLE, Format.TORCH_LEGACY, Format.TEXT, Format.UNKNOWN})
_NOTHING_TO_READ = frozenset({Format.EMPTY, Format.UNREADABLE})
# A raw blob the layout reads as bytes, whose head runs nothing as a pickle (formats.side_files).
_READ_RAW = frozenset({Format.RAW_DATA})
# Formats valid in their own right: with one more valid reading, the file is a polyglot.
_WEAK = frozenset({Format.TEXT, Format.UNKNOWN}) | _NOTHING_TO_READ | _READ_RAW
_END_RECORD = b"PK\x05\x06"
_END_RECORD_SIZE = 22
_END_SEARCH = _END_RECORD_SIZE + 0xFFFF  # zipfile._EndRecData: the record plus a maximal comment
_MAX_TAR_HEADERS = 100_000  # headers read to place an inner zip (a member list, no data)


@dataclass(frozen=True)
class Reading:
    """One more way a loader reads the file: as ``format``, by ``loader``."""

    format: str  # Format.PICKLE (from offset 0) or Format.ZIP (by its end record)
    loader: str  # who reads it so, for messages
    valid: bool  # well-formed in this reading on its own: counts towards a polyglot


@dataclass(frozen=True)
class Readings:
    primary: str
    extra: tuple[Reading, ...]

    def valid_formats(self) -> list[str]:
        """The formats the file is well-formed in (two or more: a polyglot)."""
        strong = [] if self.primary in _WEAK else [self.primary]
        return strong + [r.format for r in self.extra if r.valid and r.format not in strong]


def readings_of(path: str, head: bytes, size: int, blob: Blob, fmt: str) -> Readings:
    """The readings of a file besides its sniffed format ``fmt`` (``head``: its first bytes)."""
    extra = [r for r in (_pickle_reading(path, head, size, fmt), _zip_reading(path, blob, fmt)) if r]
    return Readings(fmt, tuple(extra))


def _pickle_reading(path: str, head: bytes, size: int, fmt: str) -> Reading | None:
    if fmt in _PICKLE_AT_ZERO or fmt in _NOTHING_TO_READ or fmt in _READ_RAW or fmt in ZIP_KINDS \
            or not could_start_pickle(head):
        return None  # a zip at offset 0 starts with PERSID: pickle.load fails there having run nothing
    valid = is_valid_pickle(head, complete=size <= len(head))
    loader = _pickle_loader(path, fmt)
    if loader is None and not valid:
        return None
    return Reading(Format.PICKLE, loader or "pickle.load from offset 0 (the bytes form a pickle)", valid)


def _pickle_loader(path: str, fmt: str) -> str | None:
    """The loader that would unpickle this file from offset 0, judged by its name."""
    if _TORCH_NAME.search(path):
        return "torch.load's legacy fallback (not a zip at offset 0: tar, then pickles from offset 0)"
    if _NUMPY_NAME.search(path) and fmt != Format.NUMPY:
        return "numpy.load's allow_pickle fallback (neither NPY nor zip magic)"
    if _PICKLE_NAME.search(path):
        return "pickle.load / joblib.load from offset 0"
    return None


def _zip_reading(path: str, blob: Blob, fmt: str) -> Reading | None:
    """A zip found by its end record in a file that is no zip at offset 0 (zipfile's reading)."""
    if fmt in ZIP_KINDS or not (fmt in (Format.PICKLE, Format.TORCH_LEGACY, Format.TAR) or _loader_named(path)):
        return None
    size = blob.size
    tail_at = max(0, size - _END_SEARCH)
    tail = blob.read(tail_at, _END_SEARCH) if size >= _END_RECORD_SIZE else b""
    if _END_RECORD not in tail:
        return None
    try:
        members = read_directory(blob)
    except CorruptStream:
        return None  # an end-record signature in raw data, not an archive any reader opens
    if not members:
        return None
    if fmt == Format.TAR and _inside_one_tar_member(blob, members, tail_at + tail.rindex(_END_RECORD)):
        return None  # a zip stored as a tar member (a .nemo's checkpoint): the tar walk vets it as one
    return Reading(Format.ZIP, "zipfile and tools built on it (the end record, wherever the archive starts)", True)


def _inside_one_tar_member(blob: Blob, members: list[ZipMember], end_record_at: int) -> bool:
    """Whether the zip, local headers to end record, lies within one regular member's data.

    A tar stores each member's bytes whole and uncompressed, so an archive member keeps its own
    end record; zipfile then opens exactly that member, which the tar reading vets already.
    """
    start, end = min(m.header_offset for m in members), end_record_at + _END_RECORD_SIZE
    try:
        with tarfile.open(fileobj=open_blob(blob), mode="r:") as archive:  # headers only, nothing extracted
            for count, info in enumerate(archive):
                if count >= _MAX_TAR_HEADERS:
                    return False
                if info.isreg() and info.offset_data <= start and end <= info.offset_data + info.size:
                    return True
    except (tarfile.TarError, OSError, EOFError, ValueError):
        return False
    return False


def _loader_named(path: str) -> bool:
    return any(p.search(path) for p in (_TORCH_NAME, _NUMPY_NAME, _PICKLE_NAME))


def is_valid_pickle(head: bytes, complete: bool) -> bool:
    """The head holds a whole pickle that an unpickler runs to STOP and that imports something.

    Stricter than the format sniff: a pickle that only builds data (``N.`` is None, STOP: the
    first two bytes of a safetensors header 11854 bytes long) runs nothing and is no second
    format; one that imports a global is code a loader would execute.
    """
    try:
        sniff = sniff_text(head, complete)
    except Exception:  # noqa: BLE001 - pickletools' argument decoding can raise anything (a warning too)
        return False
    return sniff.consistent and sniff.stopped and imports_before_stop(head)
