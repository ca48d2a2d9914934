"""FastAPI dependencies, named once: settings, store, jobs, the active policy, who is calling."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from app.api.errors import ApiError
from app.api.shared_reads import SharedReads
from app.core.policy import LoadedPolicy
from app.db import tokens
from app.db.session import Store
from app.db.version import VersionProbe
from app.jobs.interface import JobQueue
from app.jobs.processes import ProcessVets
from app.services.gating import GateCache
from app.services.outcomes import Resolver
from app.settings import Settings


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
            who = _verify(self, secret)
        except tokens.TokenExpired:
            return None
        return None if who is None else who.name

    def _version_and_token(self, token_digest: str | None) -> tuple[tuple[int, int], bool]:
        return (self.version(), True) if token_digest is None else self.version.with_token(token_digest)


async def state(request: Request) -> AppState:  # async: no thread hop for a lookup
    return request.app.state.hfvet  # type: ignore[no-any-return]


StateDep = Annotated[AppState, Depends(state)]


async def principal(request: Request, app: StateDep) -> tokens.Principal | None:
    """The caller, from `Authorization: Bearer <token>`; a token that is sent must be valid.

    Async so that a request without a token costs no thread hop; the store is asked in a thread.
    """
    header = request.headers.get("authorization")
    if header is None:
        return None
    secret = bearer_secret(header)
    if secret is None:
        raise ApiError(401, "bad-authorization", "send `Authorization: Bearer <token>`")
    try:
        who = await run_in_threadpool(_verify, app, secret)
    except tokens.TokenExpired as exc:
        raise ApiError(401, "token-expired", f"{exc}: ask an admin for a new one "
                       "(`hfvet token create --role R --name N [--expires-in 90d]`)") from None
    if who is None:
        raise ApiError(401, "bad-token", "the token is unknown or revoked")
    return who


def bearer_secret(header: str) -> str | None:
    """The secret of an `Authorization: Bearer <secret>` header, or None when it is not one."""
    scheme, _, secret = header.partition(" ")
    return secret.strip() if scheme.lower() == "bearer" and secret.strip() else None


def _verify(app: AppState, secret: str) -> tokens.Principal | None:
    with app.store.session() as session:
        return tokens.verify(session, secret)


PrincipalDep = Annotated[tokens.Principal | None, Depends(principal)]


def require(role: str) -> Callable[[tokens.Principal | None], tokens.Principal]:
    """A dependency that admits tokens of ``role`` or a higher one."""

    def check(who: PrincipalDep) -> tokens.Principal:
        if who is None:
            raise ApiError(401, "token-required", f"this needs a token with the {role} role (or higher)")
        if not who.may(role):
            raise ApiError(403, "role-too-low", f"token {who.name!r} is {who.role}; this needs {role}")
        return who

    return check


async def readable(app: StateDep, who: PrincipalDep) -> tokens.Principal | None:
    """Reads are open unless HFVET_READ_AUTH is set; then they need a reader token."""
    if app.settings.read_auth:
        return require("reader")(who)
    return who


ReaderDep = Annotated[tokens.Principal | None, Depends(readable)]
VetterDep = Annotated[tokens.Principal, Depends(require("vetter"))]
ReviewerDep = Annotated[tokens.Principal, Depends(require("reviewer"))]
