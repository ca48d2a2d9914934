"""The Hub endpoint's content-addressed blob cache on local (or shared) disk, bounded by size.

Layout: ``root/<kind>/<first 2 hex>/<hex>`` for finished blobs, ``root/tmp/`` for blobs being written
(same filesystem, so moving one into place is an atomic rename). Several servers may share one volume:
temp names are unique per writer, a blob is only ever renamed into place whole, recency is the file's
mtime and the total is found by scanning, so there is no counter to drift between processes. Any
file may vanish under us (another server evicting it); that is a miss, never an error.

A blob is committed only after the caller verified its bytes against the manifest, so whatever
sits in place is trusted as is.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import uuid
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

BlobKey = tuple[str, str]  # ("sha256", 64 hex) for LFS files, ("git-sha1", 40 hex) for the rest

_HEX_LENGTH = {"sha256": 64, "git-sha1": 40}
_STALE_TMP_SECONDS = 24 * 3600  # a temp file this old was left by a crashed writer


def check_key(key: BlobKey) -> BlobKey:
    """The key itself, or ValueError: only a known kind and lowercase hex of its length ever reach a path."""
    if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(part, str) for part in key)):
        raise ValueError(f"a blob key is (kind, hex), not {key!r}")
    kind, digest = key
    length = _HEX_LENGTH.get(kind)
    if length is None:
        raise ValueError(f"unknown blob kind {kind!r} (expected one of {sorted(_HEX_LENGTH)})")
    if not re.fullmatch(f"[0-9a-f]{{{length}}}", digest):
        raise ValueError(f"a {kind} blob id is {length} lowercase hex digits, not {digest!r}")
    return key


class BlobCache:
    """Blobs by content id under ``root``, evicted least recently used first beyond ``max_bytes``."""

    def __init__(self, root: Path, max_bytes: int, *, stale_tmp_seconds: float = _STALE_TMP_SECONDS) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must not be negative")
        self.root = root
        self.max_bytes = max_bytes
        self.tmp_dir = root / "tmp"
        self.tmp_dir.mkdir(parents=True, exist_ok=True)
        self._remove_stale_tmp(time.time() - stale_tmp_seconds)

    def path_of(self, key: BlobKey) -> Path:
        kind, digest = check_key(key)
        return self.root / kind / digest[:2] / digest

    def __contains__(self, key: BlobKey) -> bool:
        return self.path_of(key).is_file()

    def size_of(self, key: BlobKey) -> int | None:
        try:
            return self.path_of(key).stat().st_size
        except FileNotFoundError:
            return None

    def open(self, key: BlobKey) -> BinaryIO | None:
        """An open handle on the blob (so a later eviction cannot cut a read short), or None if absent."""
        path = self.path_of(key)
        try:
            handle = path.open("rb")
        except FileNotFoundError:
            return None
        # Recently used: evicted last. Evicted meanwhile, or a volume refusing utime: recency is only a hint.
        with contextlib.suppress(OSError):
            os.utime(path)
        return handle

    def writer(self, key: BlobKey, size: int) -> BlobWriter:
        """A writer for a blob of ``size`` bytes; nothing lands in place before ``commit()``."""
        if size < 0:
            raise ValueError("a blob size must not be negative")
        return BlobWriter(self, self.path_of(key), size)

    def usage(self) -> int:
        """Bytes held in finished blobs (temp files being written are not counted)."""
        return sum(size for _, size, _ in self._blobs())

    def evict(self, keep: Path | None = None) -> int:
        """Remove least recently used blobs (never ``keep``) until the total fits; the bytes removed."""
        blobs = self._blobs()
        total = sum(size for _, size, _ in blobs)
        freed = 0
        for _, size, path in sorted(blobs):
            if total - freed <= self.max_bytes:
                break
            if path == keep:
                continue
            path.unlink(missing_ok=True)  # another server may have evicted it first: gone all the same
            freed += size
        return freed

    def _blobs(self) -> list[tuple[int, int, Path]]:
        """(mtime ns, size, path) of every finished blob, skipping ones that vanish while we look."""
        found = []
        for kind in _HEX_LENGTH:
            for path in (self.root / kind).glob("??/*"):
                try:
                    stat = path.stat()
                except FileNotFoundError:
                    continue
                found.append((stat.st_mtime_ns, stat.st_size, path))
        return found

    def _remove_stale_tmp(self, older_than: float) -> None:
        for path in self.tmp_dir.iterdir():
            try:
                if path.stat().st_mtime < older_than:
                    path.unlink()
            except FileNotFoundError:
                pass  # another server cleaned it up at the same time


class BlobWriter:
    """Bytes of one blob going to a unique temp file; ``commit()`` moves them into place whole."""

    def __init__(self, cache: BlobCache, final: Path, size: int) -> None:
        self._cache = cache
        self._final = final
        self._size = size
        self._written = 0
        self._done = False
        # Too big to keep: count the bytes but never spend disk on them.
        self._keep = size <= cache.max_bytes
        self._tmp = cache.tmp_dir / f"{uuid.uuid4().hex}.{os.getpid()}.part"
        self._file: BinaryIO | None = self._tmp.open("xb") if self._keep else None

    def write(self, chunk: bytes) -> None:
        if self._done:
            raise ValueError("this blob writer is already committed or aborted")
        self._written += len(chunk)
        if self._written > self._size:
            raise ValueError(f"more than the declared {self._size} bytes written")
        if self._file is not None:
            self._file.write(chunk)
            self._file.flush()  # readers of ``path`` (app.services.fanout) see every byte written

    @property
    def path(self) -> Path | None:
        """The temp file the bytes go to (None when the blob is too big to keep): readable while it is written,
        and still through a handle opened before ``commit()`` renames it or ``abort()`` removes it."""
        return self._tmp if self._file is not None else None

    @property
    def final(self) -> Path:
        """Where ``commit()`` puts the blob."""
        return self._final

    def commit(self) -> bool:
        """Move the (caller-verified) blob into place and evict; False if it was too big to keep."""
        if self._done:
            raise ValueError("this blob writer is already committed or aborted")
        if self._written != self._size:
            self.abort()
            raise ValueError(f"{self._written} bytes written, {self._size} declared")
        if self._file is None:
            self._done = True
            return False
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self._file = None
        self._final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self._tmp, self._final)  # atomic; a copy already in place holds the same bytes
        self._done = True
        self._cache.evict(keep=self._final)
        return True

    def abort(self) -> None:
        """Drop what was written; nothing lands in place. Safe to call more than once."""
        self._done = True
        if self._file is not None:
            self._file.close()
            self._file = None
        self._tmp.unlink(missing_ok=True)  # unique to this writer; gone already once committed

    def __enter__(self) -> BlobWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if not self._done:
            self.abort()
