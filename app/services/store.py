"""The store itself: opening the configured one (SQLite is migrated on open, PostgreSQL only by
`hfvet db upgrade`), migrating it, and asking whether it answers (`GET /healthz`)."""

from __future__ import annotations

from sqlalchemy import inspect, text
from sqlalchemy.exc import SQLAlchemyError

from app.db.session import Store, upgrade
from app.errors import HfvetError
from app.redact import mask_url, scrub
from app.settings import Settings


class StoreError(HfvetError):
    """The store cannot be opened or is not migrated."""


# What to change, said after every reason the store cannot be opened: the setting that names it.
_WHICH = "(the store is HFVET_DATABASE_URL; unset, a SQLite file under $XDG_DATA_HOME/hfvet)"


def open_store(settings: Settings, *, signing: bool = False) -> Store:
    """The configured store; with ``signing``, one that signs what it stores with HFVET_ATTESTATION_KEY
    (SigningKeyError, one line, for a key that cannot sign; read before the store is opened)."""
    signer = None
    if signing:
        from app.services.signing_keys import configured_key  # the crypto libraries: only for a signing store

        signer = configured_key(settings)
    url = settings.store_url()
    try:
        if url.startswith("sqlite"):
            upgrade(url)  # the embedded default keeps itself current
        store = Store(url)
        if not inspect(store.engine).has_table("reports"):
            raise StoreError(f"the store at {mask_url(url)} has no schema: run `hfvet db upgrade`")
    except (SQLAlchemyError, OSError) as exc:  # OSError: a SQLite folder that cannot be made. A driver's
        # message may quote the URL or the password: scrubbed
        raise StoreError(f"cannot open the store at {mask_url(url)} {_WHICH}: "
                         f"{scrub(f'{type(exc).__name__}: {exc}', url)}") from None
    store.signer = signer
    return store


def migrate(url: str) -> None:
    """Bring the store at ``url`` to the newest migration (`hfvet db upgrade`); StoreError, scrubbed, if not."""
    try:
        upgrade(url)
    except Exception as exc:  # noqa: BLE001 (re-raised scrubbed and unchained: a driver's message may quote the password)
        raise StoreError(f"cannot migrate the store at {mask_url(url)} {_WHICH}: "
                         f"{scrub(f'{type(exc).__name__}: {exc}', url)}") from None


def ping(store: Store) -> None:
    """Ask the store a trivial question; whatever stops it answering propagates."""
    with store.session() as session:
        session.execute(text("SELECT 1"))
