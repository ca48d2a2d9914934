"""Engines and sessions for the store; migrations are applied through Alembic only."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

if TYPE_CHECKING:
    from app.core.provenance.envelope import SigningKey

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


def ensure_sqlite_folder(url: str) -> None:
    """A SQLite file's folder must exist before anything opens it (the default path is per user)."""
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite:///"):
        ensure_sqlite_folder(url)
        engine = create_engine(url, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True)


def _sqlite_pragmas(dbapi_conn: object, _record: object) -> None:
    cursor = dbapi_conn.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")  # readers (the gate) never wait for a writing vet
    cursor.close()


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str) -> None:
    """Bring the schema at ``url`` to the newest migration."""
    ensure_sqlite_folder(url)
    command.upgrade(alembic_config(url), "head")


class Store:
    """One database: an engine and a session factory. ``session()`` commits or rolls back whole."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        # Signs each verdict and review in the transaction that stores it (app.db.attestations); None: unsigned.
        self.signer: SigningKey | None = None

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._sessions() as session, session.begin():
            yield session

    def close(self) -> None:
        self.engine.dispose()
