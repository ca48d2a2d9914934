"""Imported at start-up by a server that `bench/trace_memory.py` runs with this folder on PYTHONPATH.

With HFVET_TRACE_DIR set, a daemon thread answers each ``<n>.req`` file there (JSON) with ``<n>.json``:
the collector's state, tracemalloc's traced bytes (tracing starts at the first request when
HFVET_TRACE_FRAMES is set, so the imports before it stay out), SQLite's and glibc's heap figures,
and on request a ``gc.collect()`` first, a baseline snapshot, or the top growth since the baseline.
Without HFVET_TRACE_DIR it does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import re
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

_MALLINFO2 = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")
_FIRST: list[tracemalloc.Snapshot] = []
_POLLS = {"all": 0, "off": 0}  # how often the trace thread found the collector off (a pickle walk's pause)


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _MALLINFO2]


def _native() -> dict[str, int]:
    """SQLite's own allocations (all connections) and glibc's heap: bytes in use and free inside it."""
    out = {"sqlite": 0, "malloc_used": 0, "malloc_free": 0}
    if "_sqlite3" in sys.modules:
        used = ctypes.CDLL(sys.modules["_sqlite3"].__file__).sqlite3_memory_used
        used.restype = ctypes.c_int64
        out["sqlite"] = used()
    libc = ctypes.CDLL(None)
    if hasattr(libc, "mallinfo2"):
        libc.mallinfo2.restype = _Mallinfo2
        info = libc.mallinfo2()
        out["malloc_used"], out["malloc_free"] = info.uordblks + info.hblkhd, info.fordblks
    return out


def _pymalloc() -> dict[str, int]:
    """Python's small-object allocator: bytes of its arenas (mmap'd, outside glibc's figures), bytes in use."""
    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        try:
            os.dup2(out.fileno(), 2)  # _debugmallocstats() writes to C's stderr
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode(errors="replace")
    arenas = re.search(r"^(\d+) arenas \* (\d+) bytes/arena", text, re.M)
    used = re.search(r"^# bytes in allocated blocks\s*=\s*([\d,]+)", text, re.M)
    return {"pymalloc_arenas": int(arenas[1]) * int(arenas[2]) if arenas else 0,
            "pymalloc_used": int(used[1].replace(",", "")) if used else 0, "threads": threading.active_count()}


def _top(request: dict[str, int]) -> list[dict[str, Any]]:
    """The largest growth since the baseline, by line and by traceback."""
    filters = [tracemalloc.Filter(False, tracemalloc.__file__)]
    now, first = tracemalloc.take_snapshot().filter_traces(filters), _FIRST[0].filter_traces(filters)
    return [{"size_diff": s.size_diff, "count_diff": s.count_diff,
             "traceback": s.traceback.format(limit=request["frames"], most_recent_first=True)}
            for key in ("lineno", "traceback") for s in now.compare_to(first, key)[: request["top"]]]


def _answer(request: dict[str, int]) -> dict[str, Any]:
    if not tracemalloc.is_tracing() and os.environ.get("HFVET_TRACE_FRAMES"):
        tracemalloc.start(int(os.environ["HFVET_TRACE_FRAMES"]))
    if request.get("baseline") and tracemalloc.is_tracing():
        _FIRST[:] = [tracemalloc.take_snapshot()]
    freed = gc.collect() if request.get("collect") else 0
    off = _POLLS["off"] / max(1, _POLLS["all"])
    _POLLS.update(all=0, off=0)
    out: dict[str, Any] = {
        "freed": freed, "off": off, "enabled": gc.isenabled(), "count": gc.get_count(),
        "objects": len(gc.get_objects()), "garbage": len(gc.garbage),
        "traced": tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else 0, **_native(), **_pymalloc(),
    }
    if request.get("top") and _FIRST:
        out["top"] = _top(request)
    return out


def _serve(folder: Path, stop: threading.Event | None = None) -> None:
    while stop is None or not stop.is_set():
        for path in sorted(folder.glob("*.req")):
            request = json.loads(path.read_text())
            path.unlink()
            try:
                answer = _answer(request)
            except Exception as exc:  # noqa: BLE001 - the script shows it rather than waiting in vain
                answer = {"error": repr(exc)}
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(answer))
            tmp.replace(path.with_suffix(".json"))
        _POLLS["all"] += 1
        _POLLS["off"] += not gc.isenabled()
        time.sleep(0.05)


def _is_server(argv: list[str]) -> bool:
    """True in `python -m app serve` only: the server's vet processes and multiprocessing's resource
    tracker inherit its environment and PYTHONPATH, and would answer its requests with their own figures."""
    return argv[1:3] == ["-m", "app"] and "serve" in argv[3:]


with contextlib.suppress(KeyError):
    if _is_server(sys.orig_argv):
        threading.Thread(target=_serve, args=(Path(os.environ["HFVET_TRACE_DIR"]),), name="trace-memory",
                         daemon=True).start()
