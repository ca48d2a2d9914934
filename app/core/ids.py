"""What an id is: a commit sha, a short commit id, a revision. The one home of these rules.

Pure string rules; each face translates the ``ValueError`` of ``parse_revision`` into its own
error (the API's ``invalid-revision``). Repo ids follow the hub's own ``validate_repo_id`` in the
adapters and faces (huggingface_hub is not imported by the pure core).
"""

from __future__ import annotations

import re

COMMIT_HEX = r"[0-9a-f]{40}"  # a full, lowercase git commit sha
COMMIT_PATTERN = f"^{COMMIT_HEX}$"  # the same, anchored, for schemas
_COMMIT = re.compile(COMMIT_PATTERN)
_SHORT = re.compile(r"^[0-9a-f]{7,40}$")  # git's shortest default abbreviation up to the full sha
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/\-]{0,255}")
REVISION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,255}$"  # the regex half of `parse_revision`, for schemas


def is_commit(revision: str | None) -> bool:
    """A full commit sha: exactly 40 lowercase hex digits."""
    return revision is not None and _COMMIT.fullmatch(revision) is not None


def is_short_sha(revision: str | None) -> bool:
    """A commit id as people paste it: a 7-40 hex prefix (the full sha included). Not yet used to decide."""
    return revision is not None and _SHORT.fullmatch(revision) is not None


def parse_revision(value: str) -> str:
    """A branch, tag or commit as the hub accepts it: no `..`, `//` or trailing `/`; ``ValueError`` if not."""
    if not _REVISION.fullmatch(value) or ".." in value or "//" in value or value.endswith("/"):
        raise ValueError(f"not a branch, tag or commit: {value[:100]!r}")
    return value
