"""Declarative base with a naming convention, so migrations name constraints the same everywhere.

Also the store's one datetime column type, ``UTCDateTime``: every timestamp is stored as UTC and read
back aware, on SQLite too (which keeps no zone), so no reader repairs a naive value.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import DateTime, Dialect, MetaData
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.types import TypeDecorator

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class UTCDateTime(TypeDecorator[datetime]):
    """``DateTime(timezone=True)`` (the same DDL) that hands back aware datetimes on every dialect.

    PostgreSQL's ``timestamptz`` keeps the instant; SQLite stores the clock digits only, so an aware
    value is written as its UTC clock and a naive one read back is that UTC clock (warehouse's
    ``TZDateTime`` is the model).
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return value.astimezone(UTC) if value is not None and value.tzinfo is not None else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value
