"""`hfvet db upgrade`: apply the store's migrations (PostgreSQL, or SQLite explicitly)."""

from __future__ import annotations

import typer

from app.cli import exit_codes
from app.cli.options import examples
from app.services.store import migrate
from app.settings import Settings

db_app = typer.Typer(help="The verdict store (HFVET_DATABASE_URL; SQLite by default).", no_args_is_help=True)


@db_app.command("upgrade", epilog=examples(
    ("migrate a PostgreSQL store before the servers start",
     "HFVET_DATABASE_URL=postgresql+psycopg://hfvet@db/hfvet hfvet db upgrade"),
))
def db_upgrade() -> None:
    """Bring the store's schema to the newest migration."""
    url = Settings().store_url()
    exit_codes.guard(lambda: migrate(url))
    typer.echo("store is at the newest migration")
