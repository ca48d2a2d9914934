"""`hfvet token create|list|revoke`: API tokens with roles reader < vetter < reviewer < admin."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated

import typer
from rich.table import Table

from app.cli import exit_codes
from app.cli.console import console
from app.cli.options import examples
from app.core.principals import TokenInfo
from app.services import tokens
from app.services.store import open_store
from app.settings import Settings

token_app = typer.Typer(help="API tokens (stored hashed; a secret is shown once).", no_args_is_help=True)



class Role(StrEnum):
    """--role's choices: app/core/principals.py ROLES, in its order (a test keeps the two equal)."""

    reader = "reader"
    vetter = "vetter"
    reviewer = "reviewer"
    admin = "admin"


class ListFormat(StrEnum):
    """--format of `token list`: a table to read, or JSON for scripts."""

    text = "text"
    json = "json"


# 90 days: a leaked token stops working within a quarter, yet CI is not re-keyed every month.
DEFAULT_EXPIRY = "90d"
_UNITS = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}
_DURATION = re.compile(r"([1-9][0-9]{0,5})([mhdw])")
_MAX_LIFETIME = timedelta(days=3660)  # beyond ten years, say `never` openly


def expiry(text: str, now: datetime) -> datetime | None:
    """When a token made at ``now`` with ``--expires-in text`` expires (None for `never`).

    Raises ValueError for anything else than N followed by m, h, d or w, or `never`."""
    if text == "never":
        return None
    match = _DURATION.fullmatch(text.strip().lower())
    if match is None:
        raise ValueError(f"--expires-in must be N followed by m, h, d or w (e.g. 90d, 12h), or never; got {text!r}")
    lifetime = int(match[1]) * _UNITS[match[2]]
    if lifetime > _MAX_LIFETIME:
        raise ValueError(f"--expires-in {text} is over ten years: use --expires-in never to say so")
    return now + lifetime


@token_app.command("create", epilog=examples(
    ('a token for CI that may vet', 'hfvet token create --role vetter --name ci'),
    ('an admin token for a day', 'hfvet token create --role admin --name ops --expires-in 1d'),
))
def create(
    role: Annotated[Role, typer.Option("--role", help="What it may do: each role may do what the ones before it may.")],
    name: Annotated[str, typer.Option("--name", help="A unique name, recorded as the actor in the audit log.")],
    expires_in: Annotated[
        str,
        typer.Option("--expires-in", help="Lifetime: N followed by m, h, d or w (30m, 12h, 90d, 8w), or `never`."),
    ] = DEFAULT_EXPIRY,
) -> None:
    """Create a token; its secret is printed once, alone on the last line of stdout.

    It expires after --expires-in (default 90d); an expired token gets 401 token-expired."""
    try:
        expires_at = expiry(expires_in, datetime.now(UTC))
    except ValueError as exc:
        exit_codes.fail(str(exc))
    store = exit_codes.guard(lambda: open_store(Settings()))
    try:
        secret = tokens.create(store, name, role.value, actor="cli", expires_at=expires_at)
    except ValueError as exc:
        exit_codes.fail(str(exc))
    finally:
        store.close()
    until = f"expires {_when(expires_at)}" if expires_at else "never expires"
    typer.echo(f"created {role.value} token {name!r} ({until}); store it now, it is not shown again:")
    typer.echo(secret)


@token_app.command("list", epilog=examples(
    ('every token, its role, expiry and state', 'hfvet token list'),
    ('the live tokens\' names, for a script',
     "hfvet token list --format json | jq -r '.[] | select(.state == \"live\") | .name'"),
))
def list_cmd(
    fmt: Annotated[ListFormat, typer.Option("--format", "-f", help="A table, or a JSON list of objects (name, "
                                            "role, created, expires, revoked, state; times ISO-8601 UTC, "
                                            "null for none).")] = ListFormat.text,
) -> None:
    """Every token's name, role, expiry and state (live, expired, revoked); never the secret."""
    store = exit_codes.guard(lambda: open_store(Settings()))
    try:
        rows = tokens.listing(store)
    finally:
        store.close()
    now = datetime.now(UTC)
    if fmt is ListFormat.json:
        typer.echo(json.dumps([_as_json(row, now) for row in rows], indent=2))
        return
    table = Table("name", "role", "created", "expires", "state")
    for row in rows:
        state = row.state(now)
        if state == "revoked" and row.revoked_at is not None:
            state = f"revoked {_when(row.revoked_at)}"
        table.add_row(row.name, row.role, _when(row.created_at),
                      _when(row.expires_at) if row.expires_at else "never", state)
    console().print(table)


def _as_json(row: TokenInfo, now: datetime) -> dict[str, str | None]:
    return {"name": row.name, "role": row.role, "created": _iso(row.created_at), "expires": _iso(row.expires_at),
            "revoked": _iso(row.revoked_at), "state": row.state(now)}


def _iso(at: datetime | None) -> str | None:
    """`2026-12-01T12:00:00Z` (the store hands back aware times: app.db.base.UTCDateTime)."""
    return None if at is None else at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@token_app.command("revoke", epilog=examples(
    ('stop a leaked token at once', 'hfvet token revoke ci'),
))
def revoke(name: Annotated[str, typer.Argument(help="The token's name.")]) -> None:
    """Revoke a token at once; requests with it get 401 from then on."""
    store = exit_codes.guard(lambda: open_store(Settings()))
    try:
        done = tokens.revoke(store, name, actor="cli")
    finally:
        store.close()
    if not done:
        exit_codes.fail(f"no live token named {name!r}")
    typer.echo(f"revoked {name!r}")


def _when(at: datetime) -> str:
    return at.isoformat(timespec="seconds")
