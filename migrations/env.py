"""Alembic environment: the URL comes from the config (set by app.db.session) or from Settings."""

from __future__ import annotations

from alembic import context
from sqlalchemy import engine_from_config, pool

from app.db import models  # noqa: F401  (registers the tables on Base.metadata)
from app.db.base import Base
from app.settings import Settings

config = context.config
url = config.get_main_option("sqlalchemy.url") or Settings().store_url()
target_metadata = Base.metadata


def run() -> None:
    if context.is_offline_mode():
        context.configure(url=url, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = engine_from_config({"sqlalchemy.url": url}, prefix="sqlalchemy.", poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()


run()
