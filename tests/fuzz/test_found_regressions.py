"""What the fuzz targets found, each pinned by the smallest input that showed it."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.policy.errors import PolicyError
from app.core.policy.loader import load_policy


def test_a_control_character_in_a_policy_is_a_policy_error(tmp_path: Path) -> None:
    """PyYAML's reader refuses control characters when the loader is built; that was outside the try."""
    path = tmp_path / "policy.yaml"
    path.write_text("name: x\x1a\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="invalid YAML"):
        load_policy(path)
