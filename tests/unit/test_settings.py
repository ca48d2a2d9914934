"""Settings read the environment once, with huggingface_hub's names for its own variables."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from app.settings import Settings


def test_environment_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:1234")
    monkeypatch.setenv("HF_TOKEN", "hf_x")
    monkeypatch.setenv("HFVET_POLICIES_DIR", str(tmp_path))
    monkeypatch.setenv("HFVET_HUB_WORKERS", "3")
    s = Settings()
    assert (s.hf_endpoint, s.hf_token, s.policies_root(), s.hub_workers) == (
        "http://127.0.0.1:1234", "hf_x", tmp_path, 3)


def test_bad_values_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HFVET_SCAN_WORKERS", "0")
    with pytest.raises(ValidationError, match="scan_workers"):
        Settings()


def test_polling_is_off_by_default_and_a_negative_interval_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().poll_seconds == 0
    monkeypatch.setenv("HFVET_POLL_SECONDS", "-1")
    with pytest.raises(ValidationError, match="poll_seconds"):
        Settings()


def test_policy_names_resolve_under_the_policies_dir(tmp_path: Path) -> None:
    s = Settings(policies_dir=tmp_path)
    assert s.resolve_policy(Path("strict")) == tmp_path / "strict.yaml"
    given = tmp_path / "mine.yaml"
    assert s.resolve_policy(given) == given  # a path stays a path


def test_without_a_policies_dir_the_checkout_copy_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HFVET_POLICIES_DIR", raising=False)
    assert (Settings().policies_root() / "default.yaml").is_file()
