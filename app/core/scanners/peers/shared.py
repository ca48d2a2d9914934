"""What the peer engines share per file, so each fact is computed once: opcode counts, the zip directory, bytes.

Both peers (and, once it offers them, hfvet's own engine) look at the same streams of one file;
facts live as long as the file's blob does (one scan of one file), like the zip directory cache.
"""

from __future__ import annotations

import io
import threading
import weakref
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO

from app.core.formats import zip_reader
from app.core.formats.blobs import open_blob, origin
from app.core.formats.streams import CorruptStream
from app.core.limits import LimitExceeded, MiB
from app.core.membudget import MemoryBudget
from app.core.ports import Blob

# Streams up to this size reach the peers as bytes in memory (io.BytesIO): their opcode walks call
# tell() and read() per opcode, which costs a Python call each on a blob stream. Larger ones (a
# legacy checkpoint's raw storages, a big plain .npy) are streamed as before.
IN_MEMORY_BYTES = 64 * MiB
UNRESERVED_BYTES = 8 * MiB  # smaller buffers are not reserved in the memory budget (see app.core.limits)


@dataclass
class PeerFacts:
    """Facts about one file's streams, keyed by stream: "" for the file itself, else the member name."""

    opcode_counts: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def known_opcodes(self, key: str) -> int | None:
        with self._lock:
            return self.opcode_counts.get(key)

    def record_opcodes(self, key: str, count: int) -> None:
        """A count of at least every opcode the guard would count for ``key`` (an engine's full walk)."""
        with self._lock:
            self.opcode_counts[key] = max(count, self.opcode_counts.get(key, 0))


_FACTS: weakref.WeakKeyDictionary[Blob, PeerFacts] = weakref.WeakKeyDictionary()
_FACTS_LOCK = threading.Lock()


def facts_for(blob: Blob) -> PeerFacts:
    """The one PeerFacts of the file ``blob`` reads (under any budget or prefetch wrapper)."""
    key = origin(blob)
    with _FACTS_LOCK:
        facts = _FACTS.get(key)
        if facts is None:
            facts = _FACTS[key] = PeerFacts()
        return facts


def peer_zip(stream: IO[bytes], blob: Blob, cls: type[zipfile.ZipFile] = zipfile.ZipFile) -> zipfile.ZipFile:
    """``cls`` over ``stream`` with the file's central directory parsed once (shared with hfvet's walk).

    If the shared parse fails, ``cls`` parses it itself and raises its own error, as it always did.
    """
    try:
        infos, comment = zip_reader.read_infos(blob)
    except CorruptStream:
        return cls(stream)
    return _preparsed(cls)(stream, infos, comment)


_PREPARSED: dict[type[zipfile.ZipFile], type[zip_reader.PreparsedZipFile]] = {}


def _preparsed(cls: type[zipfile.ZipFile]) -> type[zip_reader.PreparsedZipFile]:
    """``cls`` (zipfile's, or picklescan's relaxed one) reading the shared directory."""
    if cls is zipfile.ZipFile:
        return zip_reader.PreparsedZipFile
    if cls not in _PREPARSED:
        _PREPARSED[cls] = type(f"Preparsed{cls.__name__}", (zip_reader.PreparsedZipFile, cls), {})
    return _PREPARSED[cls]


@contextmanager
def in_memory(blob: Blob, budget: MemoryBudget) -> Iterator[IO[bytes]]:
    """The whole of ``blob`` as an in-memory stream when it is small enough, else a blob stream."""
    if blob.size > IN_MEMORY_BYTES:
        yield open_blob(blob)
        return
    with _reserved(budget, blob.size):
        yield io.BytesIO(blob.read(0, blob.size))


@contextmanager
def member_in_memory(stream: IO[bytes], size: int, budget: MemoryBudget) -> Iterator[IO[bytes]]:
    """An archive member's content (``stream``, ``size`` bytes declared) read into memory once."""
    with _reserved(budget, size):
        data = stream.read(size + 1)
        if len(data) > size:
            raise LimitExceeded(f"a member yields more than the {size} bytes it declares")
        yield io.BytesIO(data)


@contextmanager
def _reserved(budget: MemoryBudget, size: int) -> Iterator[None]:
    if size <= UNRESERVED_BYTES:
        yield
        return
    with budget.reserve(size):
        yield
