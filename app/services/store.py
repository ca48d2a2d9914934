"""Opening the configured store: SQLite is migrated on open, PostgreSQL only by `hfvet db upgrade`."""

from __future__ import annotations

from sqlalchemy import inspect
from sqlalchemy.exc import SQLAlchemyError

from app.db.session import Store, upgrade
from app.errors import HfvetError
from app.settings import Settings


class StoreError(HfvetError):
    """The store cannot be opened or is not migrated."""


def open_store(settings: Settings) -> Store:
    url = settings.store_url()
    try:
        if url.startswith("sqlite"):
            upgrade(url)  # the embedded default keeps itself current
        store = Store(url)
        if not inspect(store.engine).has_table("reports"):
            raise StoreError(f"the store at {_safe(url)} has no schema: run `hfvet db upgrade`")
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot open the store at {_safe(url)}: {type(exc).__name__}: {exc}") from exc
    return store


def _safe(url: str) -> str:
    """The URL without a password, for messages."""
    scheme, sep, rest = url.partition("://")
    if "@" in rest and ":" in rest.split("@", 1)[0]:
        user = rest.split("@", 1)[0].split(":", 1)[0]
        rest = f"{user}:***@{rest.split('@', 1)[1]}"
    return scheme + sep + rest
