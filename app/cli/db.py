"""`hfvet db upgrade`: apply the store's migrations (PostgreSQL, or SQLite explicitly)."""

from __future__ import annotations

import typer

from app.cli import exit_codes
from app.db.session import upgrade
from app.redact import mask_url, scrub
from app.services.store import StoreError
from app.settings import Settings

db_app = typer.Typer(help="The verdict store (HFVET_DATABASE_URL; SQLite by default).", no_args_is_help=True)


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Bring the store's schema to the newest migration."""
    url = Settings().store_url()
    exit_codes.guard(lambda: _upgrade(url))
    typer.echo("store is at the newest migration")


def _upgrade(url: str) -> None:
    try:
        upgrade(url)
    except Exception as exc:  # noqa: BLE001 (re-raised scrubbed and unchained: a driver's message may quote the password)
        raise StoreError(f"cannot migrate the store at {mask_url(url)}: "
                         f"{scrub(f'{type(exc).__name__}: {exc}', url)}") from None
