"""The procrastinate connection: the store's PostgreSQL URL as libpq, the queue's schema first; SQLite refused."""

from __future__ import annotations

import pytest
from psycopg.conninfo import conninfo_to_dict

from app.errors import InputError
from app.jobs.connection import SCHEMA, conninfo


def test_the_store_url_becomes_libpq_with_the_queue_schema_on_the_path() -> None:
    parts = conninfo_to_dict(conninfo("postgresql+psycopg://hfvet:p%40ss@db.internal:5433/hfvet?sslmode=require"))
    assert parts == {"user": "hfvet", "password": "p@ss", "host": "db.internal", "port": "5433", "dbname": "hfvet",
                     "sslmode": "require", "options": f"-c search_path={SCHEMA}"}


def test_sqlite_has_no_queue_to_defer_to() -> None:
    with pytest.raises(InputError, match="HFVET_QUEUE=procrastinate needs a PostgreSQL"):
        conninfo("sqlite:///store.db")
