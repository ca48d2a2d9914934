"""Rate limits for what changes state: a token bucket per caller for every mutating request.

A caller is who it is, not what it sends: a live API token is its own caller (by name), and
anything else (no token, a malformed header, an unknown, revoked or expired token) is its client
address (an IPv6 address by its /64, what one host is given). A random bearer string therefore
spends its address's bucket, not a fresh one of its own. Telling a live token from a forged one
costs one indexed read of the tokens table, the read the route would make anyway; a write without
a bearer token is refused with 429 before any store query.

Reads are not limited here (the gate is the hot path and is cheap); writes queue vets, record
reviews or take webhooks. Tokens and addresses have separate bounded tables (least recently seen
forgotten first): only live tokens, which an admin creates, enter the first, so a spray of
addresses or strings can neither grow memory nor evict a real token's bucket.
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.errors import error_body
from app.core.principals import bearer_secret

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MAX_CALLERS = 10_000  # per table: tokens, addresses

# The name of the live token a bearer secret belongs to, or None (unknown, revoked, expired).
TokenName = Callable[[str], str | None]


@dataclass
class _Bucket:
    tokens: float
    at: float


class TokenBuckets:
    """``burst`` requests at once per key, refilled at ``per_second``; thread-safe, bounded in keys."""

    def __init__(
        self, burst: int, per_second: float, *, clock: Callable[[], float] = time.monotonic, max_keys: int = MAX_CALLERS
    ) -> None:
        self.burst, self.per_second, self._clock, self._max_keys = burst, per_second, clock, max_keys
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """0 if ``key`` may go on now (one token spent), else the seconds until it may."""
        now = self._clock()
        with self._lock:
            bucket = self._buckets.pop(key, None) or _Bucket(float(self.burst), now)
            bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * self.per_second)
            bucket.at = now
            self._buckets[key] = bucket  # most recently seen last
            while len(self._buckets) > self._max_keys:
                self._buckets.popitem(last=False)
            if bucket.tokens >= 1:
                bucket.tokens -= 1
                return 0.0
            return (1 - bucket.tokens) / self.per_second if self.per_second > 0 else math.inf


@dataclass
class CallerBuckets:
    """One table for live tokens, one for addresses: filling one never evicts from the other."""

    tokens: TokenBuckets
    addresses: TokenBuckets


class RateLimit:
    """ASGI middleware: a 429 with Retry-After for a caller whose bucket of mutating requests is empty.

    ``token_name`` says which live token a bearer secret is; by default the server's store is asked
    (app.state.AppState.token_name), in a thread."""

    def __init__(self, app: ASGIApp, buckets: CallerBuckets | None, token_name: TokenName | None = None) -> None:
        self.app, self.buckets, self.token_name = app, buckets, token_name

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.buckets is None or scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        name = await self._live_token(scope)
        wait = (self.buckets.tokens.take(name) if name is not None
                else self.buckets.addresses.take(address_key(scope)))
        if wait == 0:
            await self.app(scope, receive, send)
            return
        retry_after = str(max(1, math.ceil(min(wait, 3600))))
        body = error_body("rate-limited", f"too many requests that change state; retry in {retry_after} s")
        await JSONResponse(body, status_code=429, headers={"Retry-After": retry_after})(scope, receive, send)

    async def _live_token(self, scope: Scope) -> str | None:
        """The name of the live token the request carries, or None (then its address is the caller)."""
        secret = _bearer(scope)
        if secret is None:
            return None
        token_name = self.token_name or _store_token_name(scope)
        if token_name is None:
            return None
        try:
            return await run_in_threadpool(token_name, secret)
        except Exception:  # noqa: BLE001 - a store that does not answer: the route reports it its own way
            return None


def _bearer(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":  # the first one, as Starlette's headers.get reads it for the route
            return bearer_secret(value.decode("latin-1"))
    return None


def _store_token_name(scope: Scope) -> TokenName | None:
    state = getattr(scope["app"].state, "hfvet", None) if "app" in scope else None  # set by the lifespan
    return None if state is None else state.token_name


def address_key(scope: Scope) -> str:
    """The client's address as a bucket key: IPv4 whole, IPv6 by its /64 (one host's allotment)."""
    client = scope.get("client")
    host = client[0] if client else "unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "ip:" + host  # a test client's or a unix socket's name
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return "ip:" + str(address.ipv4_mapped)
        return "ip:" + str(ipaddress.ip_network(f"{address}/64", strict=False))
    return "ip:" + str(address)


def buckets_from(burst: int, per_second: float, max_callers: int = MAX_CALLERS) -> CallerBuckets | None:
    """The limiter the settings ask for; None (no limit) when either value is 0."""
    if burst <= 0 or per_second <= 0:
        return None
    return CallerBuckets(TokenBuckets(burst, per_second, max_keys=max_callers),
                         TokenBuckets(burst, per_second, max_keys=max_callers))
