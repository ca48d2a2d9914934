"""Compiled YARA rules kept between processes, keyed by the digest of their sources.

Compiling the rule files costs a cold `hfvet scan` tens of milliseconds; loading the saved
compilation costs about one. A cache file holds ``sha256(key + payload) || payload``: a file
that is truncated, corrupt, written by another yara version or for other sources fails that
check (or yara's own load) and the rules are compiled again and the file rewritten. The
rules' conventions (one rule per file, meta) are checked by tests/rules, not at every start.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yara

from app.core.sealed_cache import read_sealed, user_cache_dir, write_sealed


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/hfvet``, else ``~/.cache/hfvet``."""
    return user_cache_dir()


def sources_key(paths: Sequence[Path]) -> str:
    """Names the exact rule set and the yara build that compiles it."""
    digest = hashlib.sha256(f"yara-python {yara.__version__}\n".encode())
    for path in paths:
        source = path.read_bytes()
        digest.update(f"{path.stem}\n{len(source)}\n".encode() + source)
    return digest.hexdigest()


def compiled_rules(paths: Sequence[Path], directory: Path | None = None) -> Any:
    """The rules of ``paths`` (namespace = file stem), from the cache when it holds them intact."""
    key = sources_key(paths)
    cache_file = (directory or cache_dir()) / f"yara-{key[:32]}.bin"
    cached = _load(cache_file, key)
    if cached is not None:
        return cached
    rules = yara.compile(filepaths={p.stem: str(p) for p in paths})
    _save(rules, cache_file, key)
    return rules


def _load(cache_file: Path, key: str) -> Any | None:
    payload = read_sealed(cache_file, key)  # truncated, corrupt or foreign: never handed to yara
    if payload is None:
        return None
    try:
        return yara.load(file=io.BytesIO(payload))
    except yara.Error:
        return None


def _save(rules: Any, cache_file: Path, key: str) -> None:
    buffer = io.BytesIO()
    rules.save(file=buffer)
    write_sealed(cache_file, key, buffer.getvalue())
