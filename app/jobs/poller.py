"""A background thread that calls one poll function every ``interval`` seconds until stopped."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)
STOP_WAIT = 30.0  # a pass blocked on a slow hub does not hold up shutdown for longer


class Poller:
    def __init__(self, interval: float, poll: Callable[[], object]) -> None:
        self._interval = interval
        self._poll = poll
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start polling; an interval of 0 (the default) leaves polling off."""
        if self._interval <= 0 or self.running:
            return
        self._stopping.clear()
        self._thread = threading.Thread(target=self._loop, name="hfvet-poll", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(STOP_WAIT)
            self._thread = None

    def _loop(self) -> None:
        while not self._stopping.wait(self._interval):  # the first pass comes one interval after start
            try:
                self._poll()
            except Exception:  # a failed pass queues nothing; the next one tries again
                log.exception("poll pass failed; next in %ss", self._interval)
