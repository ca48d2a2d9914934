"""Store URLs for the store tests: a fresh SQLite file, and a fresh PostgreSQL database when one is up."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from app.db.session import Store, upgrade

PG_URL = os.environ.get("HFVET_TEST_DATABASE_URL")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from backend_url(request.param, tmp_path)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """A migrated store at ``store_url``, opened for the test and closed after it."""
    upgrade(store_url)
    opened = Store(store_url)
    yield opened
    opened.close()


def backend_url(backend: str, folder: Path) -> Iterator[str]:
    """A fresh store URL: ``sqlite`` (a file in ``folder``) or ``postgresql`` (see `postgres_url`)."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'store.db'}"
    else:
        yield from postgres_url()


def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL database, dropped afterwards; the test is skipped when none is up."""
    if not PG_URL:
        pytest.skip("no PostgreSQL: set HFVET_TEST_DATABASE_URL (scripts/services.sh does when it is up)")
    yield from _fresh_postgres_database(PG_URL)


def _fresh_postgres_database(admin_url: str) -> Iterator[str]:
    """A throwaway database per test, so parallel workers never share tables."""
    name = f"hfvet_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
