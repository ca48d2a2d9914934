"""Files in hfvet's user cache that are sealed with a digest of their key: the YARA rules and CEL trees.

A file is ``sha256(key + payload) + payload``. A truncated, corrupt or foreign file (one sealed for
another key) reads as absent, so its payload is never handed to a loader; writes are atomic (a
concurrent reader sees the old file or the new one), and a cache that cannot be written is no error:
the next process compiles or parses again. The seal is a digest, not a secret: whoever can write
the user's cache directory could also edit the installed package (SECURITY.md).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

DIGEST_BYTES = 32


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/hfvet``, else ``~/.cache/hfvet``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hfvet"


def seal(key: str, payload: bytes) -> bytes:
    return hashlib.sha256(key.encode() + payload).digest()


def read_sealed(cache_file: Path, key: str) -> bytes | None:
    """The payload of ``cache_file`` when it is sealed for ``key``, else None."""
    try:
        data = cache_file.read_bytes()
    except OSError:
        return None
    digest, payload = data[:DIGEST_BYTES], data[DIGEST_BYTES:]
    return payload if digest == seal(key, payload) else None


def write_sealed(cache_file: Path, key: str, payload: bytes) -> None:
    """Write ``payload`` sealed for ``key``, atomically; any OS error leaves no file and is ignored."""
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=cache_file.parent, prefix=f".{cache_file.stem[:16]}-")
    except OSError:
        return
    temporary = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(seal(key, payload) + payload)
        os.replace(temporary, cache_file)
    except OSError:
        temporary.unlink(missing_ok=True)
