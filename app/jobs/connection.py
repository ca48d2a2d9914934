"""The procrastinate app on the store's PostgreSQL: its connection, its queues and its task names."""

from __future__ import annotations

import procrastinate
from psycopg.conninfo import make_conninfo
from sqlalchemy.engine import make_url

from app.errors import InputError

SCHEMA = "procrastinate"  # migration 0005 puts the queue's tables there, apart from the store's
VET_TASK = "hfvet.vet"
REVET_TASK = "hfvet.revet"
VET_QUEUE = "vets"
REVET_QUEUE = "revet"


def conninfo(store_url: str) -> str:
    """libpq connection string for the store's SQLAlchemy URL, with the queue's schema first on the path."""
    url = make_url(store_url)
    if url.get_backend_name() != "postgresql":
        raise InputError("HFVET_QUEUE=procrastinate needs a PostgreSQL HFVET_DATABASE_URL "
                         "(SQLite runs vets in the server: HFVET_QUEUE=inprocess)")
    plain = url.set(drivername="postgresql").render_as_string(hide_password=False)
    return make_conninfo(plain, options=f"-c search_path={SCHEMA}")


def deferring_app(store_url: str) -> procrastinate.App:
    """A synchronous app for processes that only queue work (the API replicas)."""
    return procrastinate.App(connector=procrastinate.SyncPsycopgConnector(conninfo=conninfo(store_url)))


def working_app(store_url: str) -> procrastinate.App:
    """An asyncio app for `hfvet worker` (tasks are registered on it by app.jobs.tasks)."""
    return procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo(store_url)))
