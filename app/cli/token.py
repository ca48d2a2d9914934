"""`hfvet token create|list|revoke`: API tokens with roles reader < vetter < reviewer < admin."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from app.cli import exit_codes
from app.db import tokens
from app.services.store import open_store
from app.settings import Settings

token_app = typer.Typer(help="API tokens (stored hashed; a secret is shown once).", no_args_is_help=True)


@token_app.command("create")
def create(
    role: Annotated[str, typer.Option("--role", help=f"One of {', '.join(tokens.ROLES)}.")],
    name: Annotated[str, typer.Option("--name", help="A unique name, recorded as the actor in the audit log.")],
) -> None:
    """Create a token; its secret is printed once, alone on the last line of stdout."""
    store = exit_codes.guard(lambda: open_store(Settings()))
    try:
        with store.session() as session:
            secret = tokens.create(session, name, role, actor="cli")
    except ValueError as exc:
        exit_codes.fail(str(exc))
    finally:
        store.close()
    typer.echo(f"created {role} token {name!r}; store it now, it is not shown again:")
    typer.echo(secret)


@token_app.command("list")
def list_cmd() -> None:
    """Every token's name, role and state (never the secret)."""
    store = exit_codes.guard(lambda: open_store(Settings()))
    with store.session() as session:
        rows = tokens.listing(session)
    store.close()
    table = Table("name", "role", "created", "revoked")
    for row in rows:
        table.add_row(row.name, row.role, row.created_at.isoformat(timespec="seconds"),
                      row.revoked_at.isoformat(timespec="seconds") if row.revoked_at else "")
    Console().print(table)


@token_app.command("revoke")
def revoke(name: Annotated[str, typer.Argument(help="The token's name.")]) -> None:
    """Revoke a token at once; requests with it get 401 from then on."""
    store = exit_codes.guard(lambda: open_store(Settings()))
    with store.session() as session:
        done = tokens.revoke(session, name, actor="cli")
    store.close()
    if not done:
        exit_codes.fail(f"no live token named {name!r}")
    typer.echo(f"revoked {name!r}")
