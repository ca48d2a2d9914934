"""Repo ids and revisions checked by the Hub's own rules before anything is asked of the hub."""

from __future__ import annotations

from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id  # type: ignore[attr-defined]  # public, lazily exported

from app.api.errors import ApiError
from app.core.ids import parse_revision

# The same rules as patterns for the OpenAPI schema (ASCII, as the hub's): what they cannot say is
# in the descriptions. Checked by the functions below, so a refusal keeps its own error code.
_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?"
ORG_PATTERN = f"^{_PART}$"
REPO_PATTERN = f"^{_PART}/{_PART}$"
CURSOR_PATTERN = r"^[A-Za-z0-9_-]{1,400}$"  # unpadded url-safe base64, as GET /repos hands them out
JOB_ID_PATTERN = r"^[0-9A-Za-z_-]{1,64}$"
REPO_RULES = "ORG/NAME on the hub: letters, digits, `_`, `.`, `-`, each part 1-96 long, starting and " \
             "ending with a letter, digit or `_`, without `--` or `..`, not ending in `.git`."
REVISION_RULES = "Branch, tag or commit sha: no `..`, `//` or trailing `/`."


def documented(pattern: str) -> dict[str, str]:
    """A parameter's ``json_schema_extra``: ``pattern`` in the schema, left to the checks here to enforce
    (FastAPI's own check would answer `invalid-request` with a regex where `invalid-repo` says what is wrong)."""
    return {"pattern": pattern}


def repo_id(value: str) -> str:
    if value.count("/") != 1:
        raise ApiError(422, "invalid-repo", f"repo must be ORG/NAME, got {value[:100]!r}")
    try:
        validate_repo_id(value)
    except HFValidationError as exc:
        raise ApiError(422, "invalid-repo", str(exc)) from exc
    return value


def revision(value: str) -> str:
    try:
        return parse_revision(value)
    except ValueError as exc:
        raise ApiError(422, "invalid-revision", str(exc)) from exc


def org(value: str) -> str:
    """An org (or user) name, by the same rules as the first half of a repo id."""
    if "/" in value:
        raise ApiError(422, "invalid-org", f"an org has no '/': {value[:100]!r}")
    try:
        validate_repo_id(f"{value}/x")
    except HFValidationError as exc:
        raise ApiError(422, "invalid-org", f"not a hub org name: {value[:100]!r}") from exc
    return value
