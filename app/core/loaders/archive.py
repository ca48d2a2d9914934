"""Text members of a tar that a runtime extracts and reads (NeMo's ``model_config.yaml`` in a ``.nemo``).

NeMo's ``SaveRestoreConnector`` untars the file (plain, or gzip in older releases) and instantiates the
config it finds. A plain tar is walked with hfvet's own bounded walker, seeking past member data. A
compressed one is read front to back as tarfile's stream mode reads it, every decompressed byte judged
by ``Limits`` (size and expansion ratio), and the walk stops once every wanted name was seen (the config
is near the front of a ``.nemo``). Only members whose names match and whose size is within the text
limit are read; nothing is extracted.
"""

from __future__ import annotations

import fnmatch
import posixpath
import tarfile
import zlib
from collections.abc import Iterator
from typing import IO, cast

from app.core.formats.archive_members import ArchiveError, Member
from app.core.formats.tar_members import BlobCursor, Compressed, open_stream, tar_members
from app.core.limits import LimitExceeded, Limits
from app.core.ports import Blob, SourceError


class UnreadArchive(Exception):
    """The compressed archive could not be read far enough to find its configs."""


def member_texts(blob: Blob, patterns: tuple[str, ...], max_bytes: int) -> Iterator[tuple[str, str | None]]:
    """(member name, text) of each regular member whose name (or base name) matches ``patterns``; the text
    is None for a member over ``max_bytes``, so the caller can say it was not read."""
    cursor = BlobCursor(blob)
    try:
        for event in tar_members(cursor):
            if not isinstance(event, Member) or not _wanted(event.name, patterns):
                continue
            if event.size > max_bytes:
                yield event.name, None
                continue
            start = cursor.pos - (-event.size % 512) - event.size  # the walk has skipped past its data
            yield event.name, blob.read(start, event.size).decode("utf-8", errors="replace")
    except ArchiveError:
        return  # the archive scanners report a malformed tar


def compressed_member_texts(blob: Blob, fmt: str, patterns: tuple[str, ...],
                            limits: Limits) -> Iterator[tuple[str, str | None]]:
    """As ``member_texts``, for a gzip/bz2/xz tar; raises ``UnreadArchive`` when the stream breaks or a limit
    stops it before every wanted name was seen (the caller reports the configs as unread)."""
    stream = _Bounded(open_stream(blob, fmt), limits)
    left = set(patterns)
    try:
        # Stream mode reads headers and data in order and only ever calls read(): the bounded reader
        # stands in for a file. Nothing is extracted.
        with tarfile.open(fileobj=cast(IO[bytes], stream), mode="r|") as archive:
            for info in archive:
                if not info.isfile() or not _wanted(info.name, patterns):
                    continue
                left -= {p for p in patterns if _wanted(info.name, (p,))}
                if info.size > limits.max_text_bytes:
                    yield info.name, None
                else:
                    data = archive.extractfile(info)
                    yield info.name, data.read().decode("utf-8", errors="replace") if data else None
                if not left:
                    return
    except (tarfile.TarError, EOFError, OSError, zlib.error, LimitExceeded, SourceError, ValueError) as exc:
        raise UnreadArchive(f"{type(exc).__name__}: {exc}") from exc


class _Bounded:
    """The decompressed stream as tarfile's stream mode reads it, every byte judged by the limits."""

    def __init__(self, compressed: Compressed, limits: Limits) -> None:
        self._compressed = compressed
        self._limits = limits
        self.total = 0

    def read(self, size: int = -1) -> bytes:
        data = self._compressed.stream.read(size if size >= 0 else 1 << 20)
        self.total += len(data)
        self._limits.check_expansion(self.total, self._compressed.consumed(), "compressed archive")
        return data


def _wanted(name: str, patterns: tuple[str, ...]) -> bool:
    clean = name.removeprefix("./")
    return any(fnmatch.fnmatchcase(clean, p) or fnmatch.fnmatchcase(posixpath.basename(clean), p)
               for p in patterns)
