"""Rate limits for what changes state: a token bucket per caller for every mutating request.

A caller is its bearer token (by digest: the secret is never kept) or, without one, its IP address.
Reads are not limited here (the gate is the hot path and is cheap); writes queue vets, record
reviews or take webhooks, and a flood of them is refused with 429 and a Retry-After before any
route, token lookup or store query runs. The bucket table is bounded (least recently seen callers
are forgotten first), so a spray of addresses cannot grow memory.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.errors import error_body

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MAX_CALLERS = 10_000


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


class RateLimit:
    """ASGI middleware: a 429 with Retry-After for a caller whose bucket of mutating requests is empty."""

    def __init__(self, app: ASGIApp, buckets: TokenBuckets | None) -> None:
        self.app, self.buckets = app, buckets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.buckets is None or scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        wait = self.buckets.take(caller_key(scope))
        if wait == 0:
            await self.app(scope, receive, send)
            return
        retry_after = str(max(1, math.ceil(min(wait, 3600))))
        body = error_body("rate-limited", f"too many requests that change state; retry in {retry_after} s")
        await JSONResponse(body, status_code=429, headers={"Retry-After": retry_after})(scope, receive, send)


def caller_key(scope: Scope) -> str:
    """The bearer token's digest when one is sent (any value: a forged one still spends), else the IP."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            return "token:" + hashlib.sha256(value).hexdigest()
    client = scope.get("client")
    return "ip:" + (client[0] if client else "unknown")


def buckets_from(burst: int, per_second: float) -> TokenBuckets | None:
    """The limiter the settings ask for; None (no limit) when either value is 0."""
    return TokenBuckets(burst, per_second) if burst > 0 and per_second > 0 else None
