"""One read for many concurrent requests that ask the same question, each answered by a read that
started after it asked.

The gate's fast path asks the store's version on every request. On PostgreSQL that is a round trip
made from a thread, one at a time on the probe's connection: under a few concurrent connections the
requests queued behind each other's round trips and the gate topped out near 2,000 answers/s. Here,
requests that arrive while a read is under way wait for the next read, which starts when that one
ends and answers them all. A read that began before a request arrived never answers it, so every
answer still reflects each commit made before its request came in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from starlette.concurrency import run_in_threadpool

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class SharedReads(Generic[K, T]):
    """``await reads(key)``: ``read(key)`` run in a thread, shared by the callers waiting for the same key."""

    def __init__(self, read: Callable[[K], T]) -> None:
        self._read = read
        self._waiting: dict[K, asyncio.Future[T]] = {}  # the next read of each key, not started yet
        self._running: set[K] = set()
        self._tasks: set[asyncio.Task[None]] = set()  # strong references while reads run
        self.reads = 0  # reads made (tests and metrics compare it with the requests answered)

    async def __call__(self, key: K) -> T:
        batch = self._waiting.get(key)
        if batch is None:
            batch = self._waiting[key] = asyncio.get_running_loop().create_future()
            batch.add_done_callback(_retrieve)
            if key not in self._running:
                self._start(key)
        return await asyncio.shield(batch)  # a caller that gives up does not cancel the others' read

    def _start(self, key: K) -> None:
        batch = self._waiting.pop(key)
        self._running.add(key)
        task = asyncio.get_running_loop().create_task(self._run(key, batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, key: K, batch: asyncio.Future[T]) -> None:
        try:
            self.reads += 1
            batch.set_result(await run_in_threadpool(self._read, key))
        except Exception as exc:  # noqa: BLE001 - every waiter gets the driver's error and decides
            batch.set_exception(exc)
        finally:
            self._running.discard(key)
            if key in self._waiting:  # callers came while this read ran: theirs starts now
                self._start(key)


def _retrieve(batch: asyncio.Future[Any]) -> None:
    """Mark an error as seen, so one that every waiter abandoned is not logged as never retrieved."""
    if not batch.cancelled():
        batch.exception()
