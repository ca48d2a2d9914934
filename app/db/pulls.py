"""Pulls through the Hub endpoint, kept in the append-only audit log: one row per file served in full.

A pull row reads ``actor`` / ``pull`` / ``org/name@<sha>`` / ``<path> (<N> bytes, <cache|upstream>)``.
The detail is written here only, so it parses exactly: the path is everything before the last
`` (<digits> bytes, <source>)``, which ends the text (a path may hold spaces or parentheses itself).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import ColumnElement, and_, func, select
from sqlalchemy.orm import Session

from app.db.models import AuditRow

PULL = "pull"
SOURCES = ("cache", "upstream")
_DETAIL = re.compile(r"(?P<path>.*) \((?P<size>\d+) bytes, (?P<source>cache|upstream)\)", re.DOTALL)


@dataclass(frozen=True)
class PullDetail:
    path: str
    size: int
    source: str  # "cache" or "upstream"


@dataclass(frozen=True)
class PullSummary:
    """What one actor pulled of one commit: each file counted once, however often it was served."""

    actor: str
    repo: str
    sha: str
    files: int  # distinct paths served
    bytes: int  # the size of those files, each once
    downloads: int  # files served in all (a file pulled twice counts twice)
    first: datetime
    last: datetime


def detail_of(path: str, size: int, source: str) -> str:
    """The audit detail of one file served; ValueError for a size or source the parser would not read back."""
    if size < 0 or source not in SOURCES:
        raise ValueError(f"a pull serves 0 or more bytes from {' or '.join(SOURCES)}, not {size} from {source!r}")
    return f"{path} ({size} bytes, {source})"


def parse_detail(detail: str) -> PullDetail | None:
    """detail_of() read back; None for a text it did not write."""
    found = _DETAIL.fullmatch(detail)
    if found is None:
        return None
    return PullDetail(found["path"], int(found["size"]), found["source"])


def add_pull(session: Session, actor: str, repo: str, sha: str, path: str, size: int, source: str) -> None:
    session.add(AuditRow(actor=actor, action=PULL, subject=f"{repo}@{sha}", detail=detail_of(path, size, source)))


def newest_pulls(session: Session, limit: int, repo: str | None = None) -> list[PullSummary]:
    """The ``limit`` (actor, commit) pairs pulled most lately, newest first; only ``repo``'s when given.

    Grouped in SQL twice: the newest pairs first, then their rows by detail (path, size and source), so
    what comes back is bounded by pairs x files x 2 sources however often a file was pulled; the
    distinct paths and their sizes are summed here, where the detail is parsed."""
    where = _pulls(repo)
    pairs = (select(AuditRow.actor, AuditRow.subject, func.max(AuditRow.id).label("newest")).where(where)
             .group_by(AuditRow.actor, AuditRow.subject).order_by(func.max(AuditRow.id).desc()).limit(limit)
             .subquery())
    rows = session.execute(
        select(AuditRow.actor, AuditRow.subject, AuditRow.detail, func.count(), func.min(AuditRow.at),
               func.max(AuditRow.at), pairs.c.newest)
        .join(pairs, and_(AuditRow.actor == pairs.c.actor, AuditRow.subject == pairs.c.subject))
        .where(where).group_by(AuditRow.actor, AuditRow.subject, AuditRow.detail, pairs.c.newest)
    ).all()
    grouped: dict[tuple[str, str], list[_Served]] = {}
    for actor, subject, detail, count, first, last, newest in rows:
        grouped.setdefault((actor, subject), []).append(_Served(detail, count, first, last, newest))
    newest_first = sorted(grouped.items(), key=lambda pair: max(s.newest for s in pair[1]), reverse=True)
    return [_summary(actor, subject, served) for (actor, subject), served in newest_first]


def _pulls(repo: str | None) -> ColumnElement[bool]:
    if repo is None:
        return AuditRow.action == PULL
    return and_(AuditRow.action == PULL, AuditRow.subject.startswith(f"{repo}@", autoescape=True))


class _Served(NamedTuple):
    """One detail (path, size, source) of one (actor, commit), and how often and when it was served."""

    detail: str
    times: int  # how often it was served
    first: datetime
    last: datetime
    newest: int  # the pair's newest row id: the order of the list


def _summary(actor: str, subject: str, served: list[_Served]) -> PullSummary:
    sizes: dict[str, int] = {}
    for row in served:
        parsed = parse_detail(row.detail)
        # a row this module did not write counts as a file of unknown size, named by its whole detail
        path, size = (parsed.path, parsed.size) if parsed else (row.detail, 0)
        sizes[path] = max(size, sizes.get(path, 0))
    repo, _, sha = subject.rpartition("@")
    return PullSummary(actor, repo, sha, files=len(sizes), bytes=sum(sizes.values()),
                       downloads=sum(row.times for row in served), first=min(row.first for row in served),
                       last=max(row.last for row in served))
