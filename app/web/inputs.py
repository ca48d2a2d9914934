"""Checking what a visitor typed or a link carried, before it reaches a service (as a page error).

The rules are app.core.ids', as the API's (app.api.validation): both faces accept the same ids for the
same action, and a short commit id names the same vetted commit (app.services.commits). Here a form's
surrounding spaces are trimmed first, and a refusal becomes an error page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.ids import parse_org, parse_repo_id, parse_revision
from app.services.commits import AmbiguousCommit, NotACommit, vetted_commit
from app.web.page import PageError

if TYPE_CHECKING:
    from app.db.session import Store


def repo_id(value: str) -> str:
    value = value.strip()
    try:
        return parse_repo_id(value)
    except ValueError:
        raise PageError(404 if value else 422, "No such repo",
                        f"{value[:100]!r} is not a repo id (org/name).") from None


def org(value: str) -> str | None:
    value = value.strip()
    if not value:
        return None
    try:
        return parse_org(value)
    except ValueError:
        raise PageError(422, "Bad filter", f"{value[:100]!r} is not an org name.") from None


def revision(value: str) -> str:
    value = value.strip() or "main"
    try:
        return parse_revision(value)
    except ValueError:
        raise PageError(422, "Bad revision", f"{value[:100]!r} is not a branch, tag or commit.") from None


def commit(store: Store, repo: str, value: str) -> str:
    """The full sha of a vetted commit asked by its sha or its first 7+ hex digits (app.services.commits)."""
    value = value.strip()
    try:
        return vetted_commit(store, repo, value)
    except NotACommit:
        raise PageError(422, "Bad revision", f"{value[:100]!r} is not a commit sha (40 hex digits, or the first "
                                             "7 or more of them).") from None
    except AmbiguousCommit as exc:
        raise PageError(422, "Ambiguous revision", str(exc)) from None
