"""Opening the configured store: SQLite is migrated on open, PostgreSQL only by `hfvet db upgrade`."""

from __future__ import annotations

from sqlalchemy import inspect
from sqlalchemy.exc import SQLAlchemyError

from app.db.session import Store, upgrade
from app.errors import HfvetError
from app.redact import mask_url, scrub
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
            raise StoreError(f"the store at {mask_url(url)} has no schema: run `hfvet db upgrade`")
    except SQLAlchemyError as exc:  # a driver's message may quote the URL or the password: scrubbed
        raise StoreError(f"cannot open the store at {mask_url(url)}: "
                         f"{scrub(f'{type(exc).__name__}: {exc}', url)}") from None
    return store
