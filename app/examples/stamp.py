"""Build a generated repo once: a spec stamp next to it says which parameters made it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any


def stamp_path(repo: Path) -> Path:
    # Next to the repo, not inside it: no scanner and no hub listing ever sees it.
    return repo.parent / f"{repo.name}.spec.json"


def ensure_built(repo: Path, spec: Any, build: Callable[[Path], None]) -> bool:
    """Run `build(repo)` unless the stamp matches `spec` (a dataclass); True when it (re)built."""
    stamp = stamp_path(repo)
    wanted = json.dumps(asdict(spec), sort_keys=True)
    if repo.is_dir() and stamp.is_file() and stamp.read_text() == wanted:
        return False
    if repo.exists() and not stamp.is_file() and any(repo.iterdir()):
        raise FileExistsError(f"{repo} exists and was not generated here (no {stamp.name}); not replacing it")
    stamp.unlink(missing_ok=True)
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    build(repo)
    stamp.write_text(wanted)
    return True
