"""One bounded GET against a hub: timeouts, a deadline, a floor rate, redirects followed by hand.

Every request hfvet makes of a hub (model info, tree pages, Range reads) goes through ``Wire``,
so none can hang: connecting and each socket read have a timeout, every call has a deadline
(the vet's own deadline caps it), and a body that trickles in below a floor rate is cut off.
A hub that stays silent is told apart from one that fails fast (``Retry.silent``), and once one
call gave up on a silent hub the others of the same vet do not wait for it too (``Silence``).
Redirects are followed here rather than by httpx2, so the token provably stays on the hub's own
origin and the report can say which hosts served bytes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import httpx2
from huggingface_hub import get_session, hf_raise_for_status

from app.sources.hub_errors import HubError, HubProtocolError, HubStalled, HubTimeout, translate, unresolved_host

MiB = 1 << 20
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
RETRY_EXCEPTIONS = (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError)
_ERROR_BODY_LIMIT = 64 << 10


@dataclass(frozen=True)
class HubLimits:
    """Bounds on talking to a hub; each one ends in a ``HubError``, never in a hang."""

    connect_seconds: float = 10.0  # to open one connection
    # Any one socket read (the first byte of an answer included) waits at most this long: the Hub
    # answers in well under a second, and huggingface_hub's own download timeout is 10 s too.
    read_seconds: float = 10.0
    call_seconds: float = 300.0  # one hub call in all: attempts, retry waits, redirects, body
    min_bytes_per_second: float = 8 * 1024  # a body averaging less than this is cut off...
    rate_grace_seconds: float = 10.0  # ...once it has been arriving for this long
    max_json_bytes: int = 64 * MiB  # an API answer (model info, one tree page) larger than this is refused
    max_redirects: int = 5  # hops followed per request (the Hub's own CDN redirect needs one)
    max_tree_pages: int = 10_000  # pages of one tree listing: 10M files at the Hub's 1000 per page


class Retry(Exception):
    """Raised inside a retried call: try again after ``retry_after`` seconds (or the backoff).

    ``silent``: the hub sent nothing (or a trickle) for a whole timeout. Such a failure costs the
    full wait each time, so it is retried at most once; one that came fast keeps every retry.
    """

    def __init__(self, reason: str, retry_after: float | None = None, *, silent: bool = False) -> None:
        super().__init__(reason)
        self.retry_after = retry_after
        self.silent = silent


class Silence:
    """Whether a hub call of this vet gave up on a silent hub: the calls after it fail at once,
    naming that stall, rather than each waiting out its own timeouts (8 at a time, file by file)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._first: HubStalled | None = None

    @property
    def first(self) -> HubStalled | None:
        """The call that gave up on the silent hub, if one did."""
        return self._first

    def check(self, what: str) -> None:
        if self._first is not None:
            raise HubStalled(f"{what}: not sent, the hub stalled earlier in this vet: {self._first}")

    def record(self, stall: HubStalled) -> None:
        with self._lock:
            self._first = self._first or stall


@dataclass(frozen=True)
class Deadline:
    at: float  # on the time.monotonic() clock
    why: str  # what runs out, for the error: "the 300s budget of one hub call"

    @classmethod
    def within(cls, seconds: float, why: str) -> Deadline:
        return cls(time.monotonic() + seconds, why)

    def sooner(self, other: Deadline | None) -> Deadline:
        return other if other is not None and other.at < self.at else self

    def left(self) -> float:
        return self.at - time.monotonic()

    def check(self, what: str) -> None:
        if self.left() <= 0:
            raise HubTimeout(f"{what}: {self.why} ran out")


def retry_after(headers: httpx2.Headers) -> float | None:
    value = headers.get("retry-after", "").strip()
    return float(value) if value.isdigit() else None


class Wire:
    """Bounded GETs to one hub endpoint, through huggingface_hub's own HTTP session."""

    def __init__(
        self, endpoint: str, headers: Mapping[str, str], limits: HubLimits, vet_deadline: Deadline | None = None
    ) -> None:
        self.endpoint = endpoint
        self.limits = limits
        self._origin = httpx2.URL(endpoint).origin
        # Built by huggingface_hub (user agent and, if any, the token); bodies unencoded so every
        # limit counts the bytes as they are, and no decompression can run away.
        self._headers = {**headers, "Accept-Encoding": "identity"}
        self._vet_deadline = vet_deadline
        self.silence = Silence()
        self._lock = threading.Lock()
        self._served_by: set[str] = set()

    @property
    def served_by(self) -> list[str]:
        """Origins (scheme://host:port) whose 2xx bodies were read, sorted."""
        with self._lock:
            return sorted(self._served_by)

    def deadline(self) -> Deadline:
        """A fresh deadline for one call: its own budget, or the vet's if that ends sooner."""
        seconds = self.limits.call_seconds
        return Deadline.within(seconds, f"the {seconds:g}s budget of one hub call").sooner(self._vet_deadline)

    @contextmanager
    def get(
        self, url: str, deadline: Deadline, what: str, *, headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> Iterator[httpx2.Response]:
        """The final response (body unread, ``history`` = the redirect hops) of a GET of ``url``."""
        hops: list[httpx2.Response] = []
        try:
            for _ in range(self.limits.max_redirects + 1):
                deadline.check(what)
                self.silence.check(what)
                response = self._send(url, {**self._headers, **(headers or {})}, params or None, deadline)
                hops.append(response)
                if not response.has_redirect_location:
                    response.history = hops[:-1]
                    yield response
                    return
                response.close()
                url, params = _redirect_target(response, what), None  # the Location carries the query
                # (params=None, not {}: httpx2 replaces a URL's query with an empty params mapping)
            raise HubProtocolError(f"{what}: more than {self.limits.max_redirects} redirects")
        finally:
            for hop in hops:
                hop.close()

    def body(
        self, response: httpx2.Response, limit: int, deadline: Deadline, what: str,
        count: Callable[[int], None] | None = None,
    ) -> bytes:
        """The body, stopping one chunk past ``limit`` (callers compare); cut off past the
        deadline or when it arrives slower than the floor rate."""
        chunks: list[bytes] = []
        got, started = 0, time.monotonic()
        for chunk in response.iter_raw():
            if count is not None:
                count(len(chunk))
            chunks.append(chunk)
            got += len(chunk)
            if got > limit:
                break
            deadline.check(what)
            self._check_rate(got, time.monotonic() - started)
        if response.is_success:
            with self._lock:
                self._served_by.add(_origin_text(response.url))
        return b"".join(chunks)

    def check_status(self, response: httpx2.Response, deadline: Deadline, repo_id: str, revision: str) -> None:
        """Retry on 429/5xx; any other error status becomes the matching ``HubError``."""
        if response.status_code in RETRY_STATUSES:
            raise Retry(f"HTTP {response.status_code}", retry_after(response.headers))
        if response.status_code < 400:
            _check_identity(response)
            return
        # Re-wrap a bounded copy so hf_raise_for_status can read it and pick the typed error.
        body = self.body(response, _ERROR_BODY_LIMIT, deadline, f"HTTP {response.status_code} from the hub")
        copy = httpx2.Response(
            response.status_code, headers=response.headers, content=body[:_ERROR_BODY_LIMIT], request=response.request
        )
        try:
            hf_raise_for_status(copy)
        except Exception as exc:  # whichever typed client error it is, translate it
            raise translate(exc, repo_id, revision) from exc
        raise HubProtocolError(f"unexpected HTTP {response.status_code} from the hub")

    def _send(
        self, url: str, headers: dict[str, str], params: Mapping[str, str] | None, deadline: Deadline
    ) -> httpx2.Response:
        if httpx2.URL(url).origin != self._origin:
            headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}  # the token stays home
        left = max(deadline.left(), 0.001)  # no single wait may outlast the deadline
        connect, read = min(self.limits.connect_seconds, left), min(self.limits.read_seconds, left)
        timeout = httpx2.Timeout(connect=connect, read=read, write=read, pool=connect)
        session = get_session()
        request = session.build_request("GET", url, headers=headers, params=params, timeout=timeout)
        return session.send(request, stream=True, follow_redirects=False)

    def _check_rate(self, got: int, elapsed: float) -> None:
        floor = self.limits.min_bytes_per_second
        if elapsed > self.limits.rate_grace_seconds and got < floor * elapsed:
            raise Retry(f"body arriving at {got / elapsed:.0f} B/s, below the {floor:g} B/s floor", silent=True)


@contextmanager
def mapped_errors(repo_id: str, revision: str) -> Iterator[None]:
    """Transient transport failures become ``Retry``, any other client failure a ``HubError`` (a host name that
    does not resolve too: ``HubUnreachable`` at once, not after five attempts)."""
    try:
        yield
    except (HubError, Retry):
        raise
    except httpx2.TimeoutException as exc:
        raise _silent(exc) from exc
    except httpx2.ConnectError as exc:
        if unresolved_host(exc):  # a name that does not resolve now will not in the next seconds: no retry
            raise translate(exc, repo_id, revision) from exc
        raise Retry(f"{type(exc).__name__}: {exc}") from exc
    except RETRY_EXCEPTIONS as exc:
        raise Retry(f"{type(exc).__name__}: {exc}") from exc
    except Exception as exc:  # offline mode, bad URL, anything else from the client
        raise translate(exc, repo_id, revision) from exc


def _silent(exc: httpx2.TimeoutException) -> Retry:
    """A timeout, as a silent ``Retry`` naming the hub and how long it stayed silent."""
    name = type(exc).__name__
    try:
        request = exc.request
    except RuntimeError:  # raised before a request was attached: no more to say
        return Retry(f"{name}: {exc}", silent=True)
    phase, stalled = _TIMEOUT_PHASES.get(type(exc), ("read", "sent nothing"))
    seconds = request.extensions.get("timeout", {}).get(phase)
    waited = f" for {seconds:.3g}s" if isinstance(seconds, int | float) else ""
    return Retry(f"{name}: the hub at {_origin_text(request.url)} {stalled}{waited}", silent=True)


_TIMEOUT_PHASES: dict[type[httpx2.TimeoutException], tuple[str, str]] = {
    httpx2.ConnectTimeout: ("connect", "accepted no connection"),
    httpx2.ReadTimeout: ("read", "sent nothing"),
    httpx2.WriteTimeout: ("write", "took no bytes"),
    httpx2.PoolTimeout: ("pool", "left no free connection"),
}


def _check_identity(response: httpx2.Response) -> None:
    encoding = response.headers.get("content-encoding", "identity").lower()
    if encoding != "identity":
        raise HubProtocolError(f"the hub sent a {encoding}-encoded body although hfvet asked for identity")


def _redirect_target(response: httpx2.Response, what: str) -> str:
    target = response.url.join(response.headers["location"])
    if target.scheme not in ("http", "https"):
        raise HubProtocolError(f"{what}: redirected to a non-HTTP location {str(target)!r}")
    return str(target)


def _origin_text(url: httpx2.URL) -> str:
    return f"{url.scheme}://{url.netloc.decode('ascii')}"
