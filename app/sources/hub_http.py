"""Exact byte-range reads from ``/resolve/{sha}/{path}`` through huggingface_hub's own HTTP session.

``HfFileSystem`` would return whatever body a server sends, even a 200 that ignored ``Range``;
here a read is accepted only as ``206`` with exactly the requested ``Content-Range``.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import httpx2
from huggingface_hub import get_session, hf_hub_url, hf_raise_for_status

from app.sources.hub_errors import HubProtocolError, HubUnreachable, translate

T = TypeVar("T")
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
RETRY_EXCEPTIONS = (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError)
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")
_ERROR_BODY_LIMIT = 64 << 10


class Retry(Exception):
    """Raised inside a retried call: try again after ``retry_after`` seconds (or the backoff)."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 4  # attempts after the first
    backoff: float = 0.5  # first wait in seconds, doubled per retry
    max_wait: float = 30.0  # cap on any wait, Retry-After included
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def run(self, what: str, call: Callable[[], T]) -> T:
        for attempt in range(self.retries + 1):
            try:
                return call()
            except Retry as exc:
                if attempt == self.retries:
                    raise HubUnreachable(f"{what}: giving up after {attempt + 1} attempts ({exc})") from exc
                wait = exc.retry_after if exc.retry_after is not None else self.backoff * 2**attempt
                self.sleep(min(wait, self.max_wait))
        raise AssertionError("unreachable")  # the loop always returns or raises


def retry_after(headers: httpx2.Headers) -> float | None:
    value = headers.get("retry-after", "").strip()
    return float(value) if value.isdigit() else None


class RangeReader:
    """Thread-safe ranged GETs at one pinned commit, with retries and byte accounting."""

    def __init__(
        self,
        repo_id: str,
        commit: str,
        endpoint: str,
        headers: dict[str, str],
        timeout: float,
        policy: RetryPolicy,
    ) -> None:
        self._repo_id = repo_id
        self._commit = commit
        self._endpoint = endpoint
        self._headers = headers
        self._timeout = timeout
        self._policy = policy
        self._lock = threading.Lock()
        self._received = 0

    @property
    def bytes_received(self) -> int:
        return self._received

    def read(self, path: str, offset: int, length: int, size: int) -> bytes:
        """Exactly bytes [offset, offset+length) of a file of ``size`` bytes (callers clamp)."""
        url = hf_hub_url(self._repo_id, path, revision=self._commit, endpoint=self._endpoint)
        end = offset + length - 1
        headers = {**self._headers, "Range": f"bytes={offset}-{end}", "Accept-Encoding": "identity"}
        what = f"GET {path} bytes {offset}-{end}"
        return self._policy.run(what, lambda: self._attempt(url, headers, path, (offset, end, size)))

    def _attempt(self, url: str, headers: dict[str, str], path: str, want: tuple[int, int, int]) -> bytes:
        try:
            with get_session().stream("GET", url, headers=headers, timeout=self._timeout) as response:
                self._check_commit(response, path)
                if response.status_code in RETRY_STATUSES:
                    raise Retry(f"HTTP {response.status_code}", retry_after(response.headers))
                if response.status_code >= 400:
                    self._raise_http_error(response)
                self._check_range(response, path, want)
                return self._body(response, path, want[1] - want[0] + 1)
        except RETRY_EXCEPTIONS as exc:
            raise Retry(f"{type(exc).__name__}: {exc}") from exc
        except httpx2.HTTPError as exc:
            raise translate(exc, self._repo_id, self._commit) from exc

    def _check_commit(self, response: httpx2.Response, path: str) -> None:
        # Redirect hops to a CDN carry no X-Repo-Commit; any hop that does must name our commit.
        for hop in [*response.history, response]:
            served = hop.headers.get("x-repo-commit")
            if served is not None and served != self._commit:
                raise HubProtocolError(f"{path}: hub served commit {served}, not the pinned {self._commit}")

    def _check_range(self, response: httpx2.Response, path: str, want: tuple[int, int, int]) -> None:
        offset, end, size = want
        if response.status_code != 206:
            raise HubProtocolError(
                f"{path}: asked for bytes {offset}-{end} but the hub answered HTTP {response.status_code} "
                "instead of 206 Partial Content (Range ignored?); refusing possibly wrong bytes"
            )
        got = response.headers.get("content-range", "")
        match = _CONTENT_RANGE.fullmatch(got.strip())
        if match is None or tuple(int(g) for g in match.groups()) != (offset, end, size):
            raise HubProtocolError(f"{path}: wanted bytes {offset}-{end}/{size}, got Content-Range {got!r}")
        encoding = response.headers.get("content-encoding", "identity").lower()
        if encoding != "identity":
            raise HubProtocolError(f"{path}: ranged body arrived {encoding}-encoded")

    def _body(self, response: httpx2.Response, path: str, expected: int) -> bytes:
        chunks: list[bytes] = []
        got = 0
        for chunk in response.iter_raw():
            self._count(len(chunk))
            chunks.append(chunk)
            got += len(chunk)
            if got > expected:
                break  # never buffer more than one byte past what was asked
        if got != expected:
            raise HubProtocolError(f"{path}: expected {expected} body bytes, received {got}")
        return b"".join(chunks)

    def _raise_http_error(self, response: httpx2.Response) -> None:
        # Re-wrap a bounded copy so hf_raise_for_status can read it and pick the typed error.
        body = b""
        for chunk in response.iter_raw():
            self._count(len(chunk))
            body += chunk
            if len(body) >= _ERROR_BODY_LIMIT:
                break
        copy = httpx2.Response(
            response.status_code,
            headers=response.headers,
            content=body[:_ERROR_BODY_LIMIT],
            request=response.request,
        )
        try:
            hf_raise_for_status(copy)
        except Exception as exc:  # whichever typed client error it is, translate it
            raise translate(exc, self._repo_id, self._commit) from exc
        raise HubProtocolError(f"unexpected HTTP {response.status_code} from the hub")

    def _count(self, n: int) -> None:
        with self._lock:
            self._received += n
