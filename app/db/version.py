"""The store version: what moves whenever a report or a review is committed, and who wrote since.

``store_version`` and ``repos_written_since`` ask it through SQLAlchemy; ``ids_in_commit_order`` keeps
max ids a version on PostgreSQL. ``VersionProbe`` asks the same on one dedicated DBAPI connection: the
gate's fast path asks it per request. Through SQLAlchemy the question costs ~0.1 ms of statement and
result handling for a few microseconds of database work; there it is one prepared statement on a
connection kept for the purpose. Each ask is its own statement outside any transaction, so it sees
every commit made before it, by any process or connection (SQLite in WAL mode: a reader never waits
for a writer).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, Integer, bindparam, func, select, text, union
from sqlalchemy.orm import Session

from app.db.joins import reports_of
from app.db.models import RepoRow, ReportRow, ReviewRow, TokenRow
from app.db.tokens import LIVE, at

# Built once: compiled and cached by SQLAlchemy, so asking costs one round trip and no ORM work.
VERSION_QUERY = select(select(func.max(ReportRow.id)).scalar_subquery(),
                       select(func.max(ReviewRow.id)).scalar_subquery())
_ID_ORDER_LOCK = 0x68667665  # "hfve": one advisory lock for every writer of reports and reviews


def store_version(conn: Connection) -> tuple[int, int]:
    """Moves whenever a report or a review is committed (both tables are append-only): a cache key.

    Max ids are only a version if ids are handed out in commit order: see ``ids_in_commit_order``.
    """
    reports, reviews = conn.execute(VERSION_QUERY).one()
    return (reports or 0, reviews or 0)


# Built once, with the version as parameters: the gate asks it after every vet. Built per call it cost
# ~0.5 ms of CPU (statement and cache key); VersionProbe runs it compiled on its own connection (~15 us).
_REPORTS_AFTER = bindparam("reports_after", type_=Integer())
_REVIEWS_AFTER = bindparam("reviews_after", type_=Integer())
WRITTEN_SINCE_QUERY = union(
    reports_of(RepoRow.repo_id)
    .where(ReportRow.id > _REPORTS_AFTER),
    reports_of(RepoRow.repo_id)
    .join(ReviewRow, ReviewRow.report_pk == ReportRow.id)
    .where(ReviewRow.id > _REVIEWS_AFTER),
)


def repos_written_since(conn: Connection, version: tuple[int, int]) -> set[str]:
    """The repos with a report, or a review of one of their reports, committed after ``version``
    (store_version's pair: both tables are append-only and their ids come in commit order)."""
    return set(conn.execute(WRITTEN_SINCE_QUERY, {"reports_after": version[0], "reviews_after": version[1]}).scalars())


def ids_in_commit_order(session: Session) -> None:
    """Hold the id-order lock until this transaction ends; call before adding a report or a review.

    PostgreSQL hands out ids at insert and shows rows at commit: without this, a write that took its
    id first and commits last leaves max(id) unchanged, and the gate cache serves what it revoked.
    (SQLite has one writer at a time already.) A count would do too, but costs a scan per request.
    """
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ID_ORDER_LOCK})


# The version and, in the same statement, whether a token digest is a live token's (app.db.tokens.LIVE).
_LIVE_TOKEN = (select(func.count()).select_from(TokenRow)
               .where(TokenRow.digest == bindparam("digest"), LIVE)
               .scalar_subquery())
_VERSION_AND_TOKEN = VERSION_QUERY.add_columns(_LIVE_TOKEN)


SQLITE_BUSY_MS = 20


def _unchanged(value: datetime) -> datetime:
    return value


def _params(compiled: Any, values: dict[str, Any]) -> object:
    """``values`` in the form the driver takes for ``compiled``: a tuple in order (SQLite), else the dict."""
    return tuple(values[name] for name in compiled.positiontup or ()) if compiled.positional else values


class VersionProbe:
    """``store_version()`` without SQLAlchemy per call; thread-safe (one ask at a time)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._version = VERSION_QUERY.compile(dialect=engine.dialect)
        self._with_token = _VERSION_AND_TOKEN.compile(dialect=engine.dialect)
        self._written_since = WRITTEN_SINCE_QUERY.compile(dialect=engine.dialect)
        # A time as the column stores it (SQLite: SQLAlchemy's own text form, which compares in order).
        stored = TokenRow.__table__.c.expires_at.type.dialect_impl(engine.dialect)
        self._as_stored: Callable[[datetime], Any] = stored.bind_processor(engine.dialect) or _unchanged
        self._conn: Any = None
        self._lock = threading.Lock()
        # SQLite answers from a local file in microseconds: the event loop may ask it directly.
        # PostgreSQL is a round trip: ask it from a thread.
        self.inline = engine.dialect.name == "sqlite"

    def __call__(self) -> tuple[int, int]:
        reports, reviews = self._ask(str(self._version), ())
        return (reports or 0, reviews or 0)

    def with_token(self, token_digest: str, now: datetime | None = None) -> tuple[tuple[int, int], bool]:
        """The version, and whether ``token_digest`` (app.db.tokens.digest) is a live token's at ``now``."""
        values = {"digest": token_digest, "now": self._as_stored(at(now)["now"])}
        compiled = self._with_token
        reports, reviews, live = self._ask(str(compiled), _params(compiled, values))
        return (reports or 0, reviews or 0), live == 1

    def written_since(self, version: tuple[int, int]) -> set[str]:
        """repos_written_since, compiled once: the fast path asks it after every vet."""
        values = {"reports_after": version[0], "reviews_after": version[1]}
        return {repo for (repo,) in self._rows(str(self._written_since), _params(self._written_since, values))}

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _ask(self, sql: str, params: object) -> Any:
        (row,) = self._rows(sql, params)
        return row

    def _rows(self, sql: str, params: object) -> list[Any]:
        with self._lock:
            try:
                cursor = self._connection().cursor()
                try:
                    cursor.execute(sql, params) if params else cursor.execute(sql)
                    return list(cursor.fetchall())  # read to the end: no statement left open
                finally:
                    cursor.close()
            except BaseException:
                self._drop()  # a broken connection is replaced on the next ask
                raise

    def _connection(self) -> Any:
        if self._conn is None:
            raw = self._engine.raw_connection()  # the engine's connect hooks apply (SQLite pragmas)
            raw.detach()  # ours for good, never handed back to the pool
            conn: Any = raw.dbapi_connection
            if self._engine.dialect.name == "sqlite":
                conn.isolation_level = None  # autocommit: no transaction pins an old snapshot
                # Asked on the event loop: never wait there (the engine's 30 s); a busy store raises,
                # and the caller asks the slow way instead.
                conn.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_MS}")
            else:
                conn.autocommit = True
            self._conn = conn
        return self._conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
