"""Retries within a deadline, and exact byte-range reads from ``/resolve/{sha}/{path}``.

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
from huggingface_hub import hf_hub_url

from app.sources.hub_errors import HubProtocolError, HubStalled, HubTimeout, HubUnreachable
from app.sources.hub_wire import Deadline, Retry, Silence, Wire, mapped_errors

T = TypeVar("T")
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")


@dataclass(frozen=True)
class RetryPolicy:
    """Retry what failed fast (connection refused or reset, 429/5xx), not what stayed silent.

    A silent failure (``Retry.silent``: a timeout, a body below the floor rate) already cost a
    whole timeout, so it gets at most ``silent_retries`` more tries: a silent hub ends a call in
    about two read timeouts, not five. Giving up on one is ``HubStalled``, and recorded in the
    call's ``Silence`` so the rest of the vet does not wait for that hub again. Every attempt and
    every wait stays within the deadline.
    """

    retries: int = 4  # attempts after the first
    backoff: float = 0.5  # first wait in seconds, doubled per retry
    max_wait: float = 30.0  # longest wait; a longer Retry-After fails the call instead
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    silent_retries: int = 1  # of those retries, how many may follow a silent failure

    def run(self, what: str, call: Callable[[], T], deadline: Deadline, silence: Silence | None = None) -> T:
        silent = 0
        for attempt in range(self.retries + 1):
            deadline.check(what)
            try:
                return call()
            except Retry as exc:
                if deadline.left() <= 0:  # cut by the deadline (no wait outlasts it): say so, not "stalled"
                    raise HubTimeout(f"{what}: {deadline.why} ran out ({exc})") from exc
                silent += exc.silent
                if exc.silent and (silent > self.silent_retries or attempt == self.retries):
                    raise _stalled(what, exc, attempt, silence) from exc
                if attempt == self.retries:
                    raise HubUnreachable(f"{what}: giving up after {attempt + 1} attempts ({exc})") from exc
                self.sleep(self._wait(what, exc, attempt, deadline))
        raise AssertionError("unreachable")  # the loop always returns or raises

    def _wait(self, what: str, exc: Retry, attempt: int, deadline: Deadline) -> float:
        asked = exc.retry_after
        if asked is not None and asked > self.max_wait:
            raise HubUnreachable(
                f"{what}: the hub asks to retry after {asked:g}s ({exc}), longer than the {self.max_wait:g}s "
                "hfvet waits; try again later"
            ) from exc
        wait = asked if asked is not None else min(self.backoff * 2**attempt, self.max_wait)
        if wait >= deadline.left():
            raise HubTimeout(f"{what}: {deadline.why} runs out before the next attempt ({exc})") from exc
        return wait


def _stalled(what: str, exc: Retry, attempt: int, silence: Silence | None) -> HubStalled:
    stall = HubStalled(f"{what}: the hub stalled; giving up after {attempt + 1} attempts ({exc})")
    if silence is not None:
        silence.record(stall)
    return stall


class RangeReader:
    """Thread-safe ranged GETs at one pinned commit, with retries and byte accounting."""

    def __init__(self, repo_id: str, commit: str, wire: Wire, policy: RetryPolicy) -> None:
        self._repo_id = repo_id
        self._commit = commit
        self._wire = wire
        self._policy = policy
        self._lock = threading.Lock()
        self._received = 0

    @property
    def bytes_received(self) -> int:
        return self._received

    def read(self, path: str, offset: int, length: int, size: int) -> bytes:
        """Exactly bytes [offset, offset+length) of a file of ``size`` bytes (callers clamp)."""
        url = hf_hub_url(self._repo_id, path, revision=self._commit, endpoint=self._wire.endpoint)
        end = offset + length - 1
        headers = {"Range": f"bytes={offset}-{end}"}
        what = f"GET {path} bytes {offset}-{end}"
        deadline = self._wire.deadline()
        return self._policy.run(
            what, lambda: self._attempt(url, headers, path, (offset, end, size), deadline), deadline,
            self._wire.silence,
        )

    def _attempt(
        self, url: str, headers: dict[str, str], path: str, want: tuple[int, int, int], deadline: Deadline
    ) -> bytes:
        what = f"{path} bytes {want[0]}-{want[1]}"
        with mapped_errors(self._repo_id, self._commit), self._wire.get(url, deadline, what, headers=headers) as r:
            self._check_commit(r, path)
            self._wire.check_status(r, deadline, self._repo_id, self._commit)
            self._check_range(r, path, want)
            expected = want[1] - want[0] + 1
            body = self._wire.body(r, expected, deadline, what, self._count)
        if len(body) != expected:
            raise HubProtocolError(f"{path}: expected {expected} body bytes, received {len(body)}")
        return body

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

    def _count(self, n: int) -> None:
        with self._lock:
            self._received += n
