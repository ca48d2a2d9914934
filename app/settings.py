"""Where shipped trust policies live, and how a bare policy name resolves to a file."""

from __future__ import annotations

import os
from pathlib import Path


def policies_dir() -> Path:
    """$HFVET_POLICIES_DIR, else `./policies` in a checkout, else the one next to the app package."""
    configured = os.environ.get("HFVET_POLICIES_DIR")
    if configured:
        return Path(configured)
    local = Path("policies")
    return local if local.is_dir() else Path(__file__).resolve().parents[1] / "policies"


def resolve_policy(path: Path) -> Path:
    """A path, or the bare name of a shipped policy (`default`, `strict`)."""
    if path.exists() or path.suffix:
        return path
    return policies_dir() / f"{path}.yaml"
