"""Repo ids, orgs and revisions checked by the Hub's rules (app.core.ids) before anything is asked of the hub;
a refusal becomes the API's error here (`invalid-repo`, `invalid-org`, `invalid-revision`)."""

from __future__ import annotations

from app.api.errors import ApiError
from app.core.ids import parse_org, parse_repo_id, parse_revision

# The id patterns for the OpenAPI schema are app.core.ids' (ASCII, as the hub's): what they cannot say
# is in the descriptions. The functions below enforce them, so a refusal keeps its own error code.
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
    try:
        return parse_repo_id(value)
    except ValueError as exc:
        raise ApiError(422, "invalid-repo", str(exc)) from exc


def revision(value: str) -> str:
    try:
        return parse_revision(value)
    except ValueError as exc:
        raise ApiError(422, "invalid-revision", str(exc)) from exc


def org(value: str) -> str:
    """An org (or user) name, by the same rules as the first half of a repo id."""
    try:
        return parse_org(value)
    except ValueError as exc:
        raise ApiError(422, "invalid-org", str(exc)) from exc
