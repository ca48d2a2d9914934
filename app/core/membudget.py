"""One process-wide byte budget for large in-memory buffers, shared by every scan thread.

The pipeline scans files on a thread pool, and a hostile snapshot can make every thread
hold a big buffer at once (a decompressed nested archive, a 100 MB safetensors header
being parsed). Such buffers are taken under ``reserve(n)``: a thread waits until ``n``
bytes of the budget are free, so big buffers are processed one or two at a time and
their sum stays under the budget whatever the number of workers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from app.core.limits import Limits

# Buffers below this are not worth serialising: workers x this is the unbudgeted slack.
SMALL_BUFFER = 8 * 1024 * 1024


class MemoryBudget:
    def __init__(self, total: int) -> None:
        self.total = max(1, total)
        self._used = 0
        self._depth: dict[int, int] = {}  # thread id -> reservations it holds
        self.max_holders = 0  # most threads ever holding a reservation at once (for tests, stats)
        self._ready = threading.Condition()

    @contextmanager
    def reserve(self, nbytes: int) -> Iterator[None]:
        """Hold ``nbytes`` of the budget (capped at the total) while the block runs.

        A thread that already holds a reservation is not made to wait again: it was admitted
        once, and waiting on itself (nested archives) could deadlock the pool.
        """
        if nbytes < SMALL_BUFFER:
            yield
            return
        amount = min(nbytes, self.total)
        owner = threading.get_ident()  # kept: a generator's finally may run on another thread
        with self._ready:
            while not self._depth.get(owner) and self._used and self._used + amount > self.total:
                self._ready.wait()
            self._used += amount
            self._depth[owner] = self._depth.get(owner, 0) + 1
            self.max_holders = max(self.max_holders, len(self._depth))
        try:
            yield
        finally:
            with self._ready:
                self._used -= amount
                self._depth[owner] -= 1
                if not self._depth[owner]:
                    del self._depth[owner]
                self._ready.notify_all()


_SHARED: dict[int, MemoryBudget] = {}
_SHARED_LOCK = threading.Lock()


def process_budget(limits: Limits) -> MemoryBudget:
    """The budget every vet in this process shares (one per distinct ``max_buffered_bytes``)."""
    with _SHARED_LOCK:
        return _SHARED.setdefault(limits.max_buffered_bytes, MemoryBudget(limits.max_buffered_bytes))
