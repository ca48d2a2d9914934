"""The in-process queue's vets, run in child processes at a lower CPU priority.

A vet walks pickles and parses headers in Python: in a thread of the server it holds the GIL the
event loop needs, and the gate's answers waited behind it (p99 ~125 ms at 2,000 req/s while vets
ran, under 6 ms without). In a child process the scan has a GIL of its own, and with a higher nice
value the kernel gives the server's loop the cores first; the vets only take longer.

The child sends the report back as the report JSON (app.core.report_json), which the server
validates like any report before storing it; a child that dies (killed, out of memory) fails its
job visibly, and the next vet gets a fresh process.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from app.core import report_json
from app.core.jobs import VetJob
from app.core.report import Report
from app.errors import HfvetError
from app.settings import Settings

PARENT_CHECK_SECONDS = 1.0


class VetProcessError(HfvetError):
    """The vet failed in its process (the message names the error there), or the process died."""


class ProcessVets:
    """A VetFn (app.jobs.inprocess) that runs each vet in one of ``processes`` child processes."""

    def __init__(self, settings: Settings, *, processes: int, nice: int) -> None:
        self._settings = settings
        self._processes = processes
        self._nice = nice
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def __call__(self, job: VetJob) -> Report:
        pool, future = self._submit(job)
        try:
            failed, result = future.result()
        except BrokenProcessPool:
            self._discard(pool)
            # A pool whose child died fails every vet in flight in it, this one's sibling too.
            raise VetProcessError(f"a vet process died (killed, or out of memory) while {job.repo}@{job.sha} or a "
                                  "vet beside it ran; nothing was stored: vet it again") from None
        if failed:
            raise VetProcessError(str(result))
        return report_json.load(result, f"the report of {job.repo}@{job.sha} from its vet process")

    def pids(self) -> list[int]:
        """The children running now (tests check their priority)."""
        pool = self._pool
        processes: dict[int, Any] = getattr(pool, "_processes", None) or {}
        return list(processes)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _submit(self, job: VetJob) -> tuple[ProcessPoolExecutor, Future[tuple[bool, Any]]]:
        """The vet handed to a process; a pool found broken before it started (a child that died
        idle) is replaced once, since this vet never ran."""
        pool = self._current_pool()
        try:
            return pool, pool.submit(_vet_here, job.repo, job.sha)
        except BrokenProcessPool:
            self._discard(pool)
            pool = self._current_pool()
            return pool, pool.submit(_vet_here, job.repo, job.sha)

    def _current_pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # spawn: a child that inherits no threads, locks or open store connections of the server
                self._pool = ProcessPoolExecutor(self._processes, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_start_child, initargs=(self._settings, self._nice))
            return self._pool

    def _discard(self, broken: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is broken:
                self._pool = None
        broken.shutdown(wait=False, cancel_futures=True)


# In each child: its settings and its own connection to the store (the identity check and the
# reference judge read it), opened once per process.
_child: dict[str, Any] = {}


def _start_child(settings: Settings, nice: int) -> None:
    from app.services.store import open_store

    if nice:
        os.nice(nice)
    _child["settings"], _child["store"] = settings, open_store(settings)
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), name="hfvet-parent-watch", daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    """A server killed outright (SIGKILL, OOM) cannot stop its children: each leaves once it is gone
    (reparented), instead of finishing a vet nobody will store and idling on forever."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(3)


def _vet_here(repo: str, sha: str) -> tuple[bool, Any]:
    """(False, the report JSON) or (True, "ErrorName: message"): an error crosses back as text only."""
    from app.services.vetting import vet_remote

    settings = _child["settings"]
    try:
        report = vet_remote(repo, settings=settings, revision=sha, policy_path=settings.policy, store=_child["store"])
    except Exception as exc:  # noqa: BLE001 - named and sent back: the server records the job as failed
        return True, f"{type(exc).__name__}: {exc}"
    return False, report_json.dump(report)
