"""Repo ids and revisions from the command line, checked by app.core.ids' rules before any hub or store call.

The API (app.api.validation) and the dashboard (app.web.inputs) check the same ids the same way; here a
refusal is one ``error:`` line and exit 2, whether the command would have asked the store, the hub or a server.
"""

from __future__ import annotations

from typing import overload

from app.cli import exit_codes
from app.core.ids import parse_repo_id, parse_revision


def repo_id(value: str) -> str:
    try:
        return parse_repo_id(value)
    except ValueError as exc:
        exit_codes.fail(str(exc))


@overload
def revision(value: str) -> str: ...
@overload
def revision(value: None) -> None: ...
def revision(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return parse_revision(value)
    except ValueError as exc:
        exit_codes.fail(f"--revision: {exc}")
