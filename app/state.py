"""What the server holds for its lifetime: built by app.server, read by the API and the dashboard alike.

Above both faces' dependencies (app.api.deps, app.web) and below app.server, so that neither face
borrows the other's module for it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from app.core.policy import LoadedPolicy
from app.core.principals import Principal, TokenExpired
from app.db.session import Store
from app.db.version import VersionProbe
from app.jobs.interface import JobQueue
from app.jobs.processes import ProcessVets
from app.services import tokens
from app.services.gating import GateCache
from app.services.outcomes import Resolver
from app.settings import Settings
from app.shared_reads import SharedReads


@dataclass
class AppState:
    """What the server holds for its lifetime (set up in app.server's lifespan)."""

    settings: Settings
    store: Store
    jobs: JobQueue
    policy: LoadedPolicy
    resolve: Resolver
    version: VersionProbe  # the store's version, asked by the gate on every request for an exact commit
    gate_cache: GateCache = field(default_factory=GateCache)
    vet_processes: ProcessVets | None = None  # the in-process queue's vet processes (HFVET_JOB_ISOLATION=process)
    # The gate's resolver of referenced branches: shared for HFVET_HUB_RESOLVE_TTL (app.services.hub_resolutions).
    gate_resolve: Resolver | None = None
    stopping: threading.Event = field(default_factory=threading.Event)  # set on SIGTERM: answers stop resolving
    # The version (and a token digest's liveness) as the fast path asks it of a store that is a round trip away.
    shared_version: SharedReads[str | None, tuple[tuple[int, int], bool]] = field(init=False)

    # The repos written since a version, as the fast path asks when the version moved under a cached answer.
    shared_written: SharedReads[tuple[int, int], set[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.shared_version = SharedReads(self._version_and_token)
        self.shared_written = SharedReads(self._written_since)

    def _written_since(self, version: tuple[int, int]) -> set[str]:
        return self.version.written_since(version)

    def token_name(self, secret: str) -> str | None:
        """The name of the live token ``secret`` is, or None (the rate limit's caller: app.api.ratelimit)."""
        try:
            who = self.verify(secret)
        except TokenExpired:
            return None
        return None if who is None else who.name

    def verify(self, secret: str) -> Principal | None:
        """Who holds ``secret``, if it is a live token (app.services.tokens.verify); TokenExpired if it expired."""
        return tokens.verify(self.store, secret)

    def _version_and_token(self, token_digest: str | None) -> tuple[tuple[int, int], bool]:
        return (self.version(), True) if token_digest is None else self.version.with_token(token_digest)
