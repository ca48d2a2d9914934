"""`hfvet worker`'s main loop: procrastinate's worker, started again whenever it stops on its own.

procrastinate stops a worker when one of its side tasks fails (the heartbeat, the LISTEN
connection, the periodic deferrer), which is what a dropped database connection does. A worker
that exits on a blip needs a supervisor to come back; this loop is that supervisor. Only
SIGTERM or SIGINT end it, after the running vets finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import Any

import procrastinate
from procrastinate.worker import Worker

log = logging.getLogger(__name__)
RESTART_WAIT = 1.0  # seconds before a stopped worker starts again


async def work_until_stopped(app: procrastinate.App, **options: Any) -> int:
    """Run workers with ``options`` until a stop signal; returns how many times one was restarted."""
    stopping = asyncio.Event()
    current: list[Worker] = []

    def stop() -> None:
        stopping.set()
        for worker in current:
            worker.stop()  # type: ignore[no-untyped-call]  # finishes the running vets first

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop)
    app.perform_import_paths()  # type: ignore[no-untyped-call]  # procrastinate leaves these untyped
    restarts = -1
    while not stopping.is_set():
        restarts += 1
        worker = Worker(app=app, install_signal_handlers=False, **options)
        current[:] = [worker]
        try:
            await worker.run()  # type: ignore[no-untyped-call]
        except Exception as exc:  # noqa: BLE001 - e.g. the database is away at start: wait and try again
            log.warning("worker failed (%s: %s)", type(exc).__name__, exc)
        if not stopping.is_set():
            log.warning("worker stopped on its own (lost the database?); starting again in %ss", RESTART_WAIT)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), RESTART_WAIT)
    return restarts
