"""The gate's hub resolutions of referenced branches and tags, shared for a short time.

A vetted repo may name thousands of other repos by branch; every gate answer for it judges them
at the commit the hub names now. Asked straight, each answer cost one hub request per reference
(issue 25: 3,000 per answer, 88,000 for 40 callers). ``SharedResolver`` answers (repo, revision)
from, in order: this process's memory (for ``ttl`` seconds), the store's ``hub_resolutions``
rows (written by any replica within ``ttl``), and only then the hub, once per key however many
requests ask at the same moment (single flight). A failure is remembered for ``failure_ttl``, so
a hub that refuses or is down is not asked again by every answer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError

from app.core.ports import SourceError
from app.db import hub_resolutions
from app.db.hub_resolutions import Resolution
from app.db.session import Store
from app.errors import HfvetError
from app.services.outcomes import Resolver

log = logging.getLogger(__name__)
Key = tuple[str, str]  # (repo id, branch or tag)


class Unresolvable(HfvetError):
    """The hub could not name a commit for a branch or tag (remembered from an earlier ask)."""


@dataclass
class _Flight:
    """One hub ask in progress: the requests that want the same key wait for it."""

    done: threading.Event = field(default_factory=threading.Event)
    found: Resolution | None = None


class SharedResolver:
    """A Resolver in front of ``resolve`` (the hub): memory, then the store, then one hub call per key."""

    def __init__(self, resolve: Resolver, store: Store | None, *, ttl: float, failure_ttl: float,
                 size: int = 65_536, clock: Callable[[], float] = time.time) -> None:
        self._resolve, self._store = resolve, store
        self._ttl, self._failure_ttl, self._size, self._clock = ttl, failure_ttl, size, clock
        self._memory: OrderedDict[Key, Resolution] = OrderedDict()
        self._flights: dict[Key, _Flight] = {}
        self._lock = threading.Lock()
        self.hub_calls = 0  # asks that reached the hub: what the tests and the bench count

    def __call__(self, repo: str, revision: str) -> str:
        return _sha_of((repo, revision), self._lookup((repo, revision)))

    def _lookup(self, key: Key) -> Resolution:
        if self._ttl <= 0:
            return self._ask_hub(key)
        with self._lock:
            found = self._remembered(key)
            if found is not None:
                return found
            flight = self._flights.get(key)
            leader = flight is None
            if flight is None:
                flight = self._flights[key] = _Flight()
        if not leader:
            flight.done.wait()
            if flight.found is not None:
                return flight.found
            return self._lookup(key)  # the leader failed unexpectedly: ask again (a bug, not the hub)
        try:
            flight.found = self._from_store(key) or self._ask_and_share(key)
            with self._lock:
                self._remember(key, flight.found)
            return flight.found
        finally:
            with self._lock:
                self._flights.pop(key, None)
            flight.done.set()

    def _remembered(self, key: Key) -> Resolution | None:
        found = self._memory.get(key)
        if found is None or not self._fresh(found):
            return None
        self._memory.move_to_end(key)
        return found

    def _remember(self, key: Key, found: Resolution) -> None:
        self._memory[key] = found
        self._memory.move_to_end(key)
        while len(self._memory) > self._size:
            self._memory.popitem(last=False)

    def _fresh(self, found: Resolution) -> bool:
        age = self._now() - found.resolved_at
        return age < timedelta(seconds=self._ttl if found.sha is not None else self._failure_ttl)

    def _from_store(self, key: Key) -> Resolution | None:
        if self._store is None:
            return None
        now = self._now()
        try:
            with self._store.session() as session:
                return hub_resolutions.fresh(session, *key, ok_since=now - timedelta(seconds=self._ttl),
                                             failed_since=now - timedelta(seconds=self._failure_ttl))
        except SQLAlchemyError as exc:  # the shared rows are an economy: without them, ask the hub
            log.warning("hub resolutions: the store did not answer (%s); asking the hub", type(exc).__name__)
            return None

    def _ask_and_share(self, key: Key) -> Resolution:
        found = self._ask_hub(key)
        if self._store is not None:
            try:
                with self._store.session() as session:
                    hub_resolutions.record(session, *key, found, self._ttl)
            except SQLAlchemyError as exc:  # two replicas racing, a store restarting: the answer stands
                log.warning("hub resolutions: not stored (%s)", type(exc).__name__)
        return found

    def _ask_hub(self, key: Key) -> Resolution:
        with self._lock:
            self.hub_calls += 1
        try:
            return Resolution(self._resolve(*key), None, self._now())
        except (HfvetError, SourceError) as exc:
            return Resolution(None, f"{type(exc).__name__}: {exc}", self._now())

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self._clock(), UTC)


def _sha_of(key: Key, found: Resolution) -> str:
    if found.sha is None:
        raise Unresolvable(f"cannot resolve {key[0]}@{key[1]} on the hub: {found.error}")
    return found.sha
