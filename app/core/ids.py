"""What an id is: a repo id, an org, a commit sha, a short commit id, a revision. The one home of these rules.

Pure string rules; each face translates the ``ValueError`` of ``parse_repo_id``, ``parse_org`` and
``parse_revision`` into its own error (the API's ``invalid-repo``, the dashboard's error page), so
that both faces accept the same input for the same action.
"""

from __future__ import annotations

import re

COMMIT_HEX = r"[0-9a-f]{40}"  # a full, lowercase git commit sha
COMMIT_PATTERN = f"^{COMMIT_HEX}$"  # the same, anchored, for schemas
_COMMIT = re.compile(COMMIT_PATTERN)
SHORT_COMMIT_PATTERN = r"^[0-9a-f]{7,40}$"  # git's shortest default abbreviation up to the full sha
_SHORT = re.compile(SHORT_COMMIT_PATTERN)
_HEX = re.compile(r"[0-9a-f]{1,40}")
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/\-]{0,255}")
REVISION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,255}$"  # the regex half of `parse_revision`, for schemas
# huggingface_hub's validate_repo_id, written out (the pure core does not import huggingface_hub;
# tests/unit/core/test_ids.py holds the two to the same answers): each part 1-96 ASCII letters, digits,
# `_`, `.` or `-`, starting and ending with a letter, digit or `_`; `_hub_id` adds that neither `--`
# nor `..` occurs anywhere and the id does not end in `.git`.
_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?"
ORG_PATTERN = f"^{_PART}$"  # the regex half of `parse_org`, for schemas
REPO_PATTERN = f"^{_PART}/{_PART}$"  # the regex half of `parse_repo_id`, for schemas
_HUB_ID = re.compile(f"(?:{_PART}/)?{_PART}")


def is_commit(revision: str | None) -> bool:
    """A full commit sha: exactly 40 lowercase hex digits."""
    return revision is not None and _COMMIT.fullmatch(revision) is not None


def not_found_hint(revision: str) -> str:
    """What to add to "revision REV not found" when REV looks like a commit id cut short; else nothing.

    1-6 hex digits is too short to be one (git's shortest abbreviation is 7); 7-39 is a short id that
    only the store's vetted commits resolve (app.services.commits), so the hub not knowing it says
    to give the full sha.
    """
    if is_commit(revision) or _HEX.fullmatch(revision) is None:
        return ""
    if len(revision) < 7:
        return " (a short commit id needs 7 or more hex digits)"
    return " (a short commit id must name a vetted commit; otherwise give the full 40-hex sha)"


def is_short_sha(revision: str | None) -> bool:
    """A commit id as people paste it: a 7-40 hex prefix (the full sha included); app.services.commits resolves it."""
    return revision is not None and _SHORT.fullmatch(revision) is not None


def parse_revision(value: str) -> str:
    """A branch, tag or commit as the hub accepts it: no `..`, `//` or trailing `/`; ``ValueError`` if not."""
    if not _REVISION.fullmatch(value) or ".." in value or "//" in value or value.endswith("/"):
        raise ValueError(f"not a branch, tag or commit: {value[:100]!r}")
    return value


def parse_repo_id(value: str) -> str:
    """ORG/NAME as the hub accepts it (validate_repo_id's rules, with the org required); ``ValueError`` if not."""
    if value.count("/") != 1:
        raise ValueError(f"repo must be ORG/NAME, got {value[:100]!r}")
    _hub_id(value)
    return value


def parse_org(value: str) -> str:
    """An org (or user) name, by the same rules as the first half of a repo id; ``ValueError`` if not."""
    if "/" in value:
        raise ValueError(f"an org has no '/': {value[:100]!r}")
    try:
        _hub_id(f"{value}/x")
    except ValueError:
        raise ValueError(f"not a hub org name: {value[:100]!r}") from None
    return value


def _hub_id(value: str) -> None:
    """validate_repo_id's checks in its order, with its messages."""
    if not _HUB_ID.fullmatch(value):
        raise ValueError("Repo id must use alphanumeric chars, '-', '_' or '.'. The name cannot start or end with "
                         f"'-' or '.' and the maximum length is 96: '{value}'.")
    if "--" in value or ".." in value:
        raise ValueError(f"Cannot have -- or .. in repo_id: '{value}'.")
    if value.endswith(".git"):
        raise ValueError(f"Repo_id cannot end by '.git': '{value}'.")
