"""Git and LFS identifiers of served files, computed once per (path, size, mtime)."""

from __future__ import annotations

import hashlib
import logging
import threading
from pathlib import Path

_CHUNK = 1 << 20
_SLOW_HASH_BYTES = 64 << 20  # hashing more than this is worth a log line

log = logging.getLogger(__name__)


def git_blob_id(data: bytes) -> str:
    """The git blob SHA-1 the Hub reports as ``oid`` / ``blobId`` of a regular file."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    """The LFS pointer text whose git blob id the Hub reports for an LFS file."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


class HashCache:
    """Thread-safe memo of file digests; a changed size or mtime invalidates an entry."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._memo: dict[tuple[str, str, int, int], str] = {}

    def sha256(self, path: Path) -> str:
        return self._digest("sha256", path)

    def git_blob_id(self, path: Path) -> str:
        return self._digest("git", path)

    def _digest(self, kind: str, path: Path) -> str:
        st = path.stat()
        key = (kind, str(path), st.st_size, st.st_mtime_ns)
        with self._lock:
            hit = self._memo.get(key)
        if hit is not None:
            return hit
        if st.st_size > _SLOW_HASH_BYTES:
            log.warning("hashing %s (%d bytes); declare its sha256 in .hub.json", path, st.st_size)
        value = _hash_file(kind, path, st.st_size)
        with self._lock:
            self._memo[key] = value
        return value


def _hash_file(kind: str, path: Path, size: int) -> str:
    git = kind == "git"
    digest = hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False) if git else hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
