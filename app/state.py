"""What the server holds for its lifetime: built by app.server, read by the API and the dashboard alike.

Above both faces' dependencies (app.api.deps, app.web) and below app.server, so that neither face
borrows the other's module for it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property

from app.core.policy import LoadedPolicy
from app.core.principals import Principal, TokenExpired
from app.db.session import Store
from app.db.version import VersionProbe
from app.jobs.interface import JobQueue
from app.jobs.processes import ProcessVets
from app.services import tokens
from app.services.blob_cache import BlobCache
from app.services.commits import expand_commit
from app.services.fanout import Flights
from app.services.gating import GateCache, GateResult, cached_gate
from app.services.hub_endpoint import Endpoint, queue_vet
from app.services.outcomes import Resolver
from app.services.references import Bounds
from app.settings import Settings
from app.shared_reads import SharedReads
from app.sources.upstream import Upstream


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
    upstream: Upstream | None = None  # the Hub endpoint's source of bytes (app.endpoint): the server's own hub
    blob_cache: BlobCache | None = None  # the Hub endpoint's verified blobs (HFVET_HUB_CACHE_DIR)
    flights: Flights = field(default_factory=Flights)  # the blobs being read into the cache (app.services.fanout)
    # The version (and a token digest's liveness) as the fast path asks it of a store that is a round trip away.
    shared_version: SharedReads[str | None, tuple[tuple[int, int], bool]] = field(init=False)

    # The repos written since a version, as the fast path asks when the version moved under a cached answer.
    shared_written: SharedReads[tuple[int, int], set[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.shared_version = SharedReads(self._version_and_token)
        self.shared_written = SharedReads(self._written_since)

    def _written_since(self, version: tuple[int, int]) -> set[str]:
        return self.version.written_since(version)

    def gate(self, repo: str, revision: str | None, left: threading.Event | None = None) -> GateResult:
        """The gate's answer as this server gives it (GET /gate and the Hub endpoint): a short commit id first
        resolved to the vetted commit it names (or the hub's), exact commits from the cache; bounded by the hub
        budget, and ended when ``left`` is set (the client left) or the server is stopping."""
        revision = expand_commit(self.store, repo, revision, self.resolve)
        bounds = Bounds(self.settings.gate_hub_budget,
                        lambda: (left is not None and left.is_set()) or self.stopping.is_set())
        return cached_gate(self.gate_cache, repo, revision, store=self.store, policy=self.policy,
                           resolve=self.resolve, references=self.gate_resolve, bounds=bounds)

    @cached_property
    def hub_endpoint(self) -> Endpoint:
        """The Hub endpoint's decision (app.services.hub_endpoint), through this server's gate."""
        queue = queue_vet(self.jobs, self.resolve) if self.settings.hub_vet_unvetted else None
        return Endpoint(lambda repo, revision: self.gate(repo, revision), self.settings.hub_branch_moved, queue)

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
