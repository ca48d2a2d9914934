"""Pause Python's cyclic garbage collector while a pickle walk runs.

A walk builds millions of small symbolic values (constants, tuples, calls) and keeps most of
them in the memo until its end; every few hundred allocations the collector would traverse
them again, which costs about a third of a big walk. They are freed by reference counting
when the walk ends; what the pause defers is only the collection of reference cycles, which
runs again as soon as the last concurrent walk ends. Walks are bounded (``max_pickle_opcodes``),
so the pause is too. Process-wide, hence counted: threads walking at once share one pause.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Pause:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.holders = 0
        self.resume = False  # whether the collector was on when the first walk paused it


_PAUSE = _Pause()


@contextmanager
def collector_paused() -> Iterator[None]:
    with _PAUSE.lock:
        if _PAUSE.holders == 0:
            _PAUSE.resume = gc.isenabled()
            gc.disable()
        _PAUSE.holders += 1
    try:
        yield
    finally:
        with _PAUSE.lock:
            _PAUSE.holders -= 1
            if _PAUSE.holders == 0 and _PAUSE.resume:
                gc.enable()
