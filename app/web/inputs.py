"""Checking what a visitor typed or a link carried, before it reaches a service (as a page error)."""

from __future__ import annotations

import re

from app.core.ids import is_commit
from app.web.page import PageError

_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9._-]{1,96}")
_ORG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
_REVISION = re.compile(r"[A-Za-z0-9._/-]{1,256}")


def repo_id(value: str) -> str:
    value = value.strip()
    if not _REPO.fullmatch(value) or ".." in value:
        raise PageError(404 if value else 422, "No such repo", f"{value[:100]!r} is not a repo id (org/name).")
    return value


def org(value: str) -> str | None:
    value = value.strip()
    if not value:
        return None
    if not _ORG.fullmatch(value):
        raise PageError(422, "Bad filter", f"{value[:100]!r} is not an org name.")
    return value


def revision(value: str) -> str:
    value = value.strip() or "main"
    if not _REVISION.fullmatch(value) or ".." in value:
        raise PageError(422, "Bad revision", f"{value[:100]!r} is not a branch, tag or commit.")
    return value


def commit(value: str) -> str:
    value = value.strip()
    if not is_commit(value):
        raise PageError(422, "Bad revision", f"{value[:100]!r} is not a 40-hex commit sha.")
    return value
