"""Repo ids and revisions checked by the Hub's own rules before anything is asked of the hub."""

from __future__ import annotations

import re

from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id  # type: ignore[attr-defined]  # public, lazily exported

from app.api.errors import ApiError

_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/\-]{0,255}")


def repo_id(value: str) -> str:
    if value.count("/") != 1:
        raise ApiError(422, "invalid-repo", f"repo must be ORG/NAME, got {value[:100]!r}")
    try:
        validate_repo_id(value)
    except HFValidationError as exc:
        raise ApiError(422, "invalid-repo", str(exc)) from exc
    return value


def revision(value: str) -> str:
    if not _REVISION.fullmatch(value) or ".." in value or "//" in value or value.endswith("/"):
        raise ApiError(422, "invalid-revision", f"not a branch, tag or commit: {value[:100]!r}")
    return value


def org(value: str) -> str:
    """An org (or user) name, by the same rules as the first half of a repo id."""
    if "/" in value:
        raise ApiError(422, "invalid-org", f"an org has no '/': {value[:100]!r}")
    try:
        validate_repo_id(f"{value}/x")
    except HFValidationError as exc:
        raise ApiError(422, "invalid-org", f"not a hub org name: {value[:100]!r}") from exc
    return value
