"""Run a console script inside this process and record what it read, from /proc/self/io.

    python bench/measure_io.py REPORT.json TOOL [ARGS...]

The tool is imported before the first sample, so interpreter start-up and module imports are
not counted: `rchar` is the bytes the scan itself pulled through read()/pread() (page cache or
disk alike; sparse holes count as read), `read_bytes` what reached the block layer. Memory-mapped
reads are invisible to both. The tool's exit code is passed through.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from importlib.metadata import entry_points
from pathlib import Path


def proc_io() -> dict[str, int]:
    with open("/proc/self/io") as fh:
        return {key: int(value) for key, value in (line.split(":", 1) for line in fh if ":" in line)}


def exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    return exc.code if isinstance(exc.code, int) else 1


def _preload(tool: str, args: list[str]) -> None:
    """hfvet loads each command's modules when it runs: load them (and the scanners) before the baseline."""
    if tool != "hfvet" or not args:
        return
    from app.cli.main import load_command
    from app.core.scanners import all_scanners

    load_command(args[0])
    all_scanners()


def main() -> int:
    report, tool, *args = sys.argv[1:]
    (entry,) = entry_points(group="console_scripts", name=tool)
    run = entry.load()  # the import happens here, before the baseline
    _preload(tool, args)
    before, started = proc_io(), time.perf_counter()
    sys.argv = [tool, *args]
    code, error = 0, None
    try:
        result = run()
        code = result if isinstance(result, int) else 0
    except SystemExit as exc:
        code = exit_code(exc)
    except Exception:  # noqa: BLE001 - a crashing tool is a measured failure, not a bench crash
        code, error = 1, traceback.format_exc()
    seconds = time.perf_counter() - started
    sys.stdout.flush()
    after = proc_io()
    measured = {key: after[key] - before.get(key, 0) for key in after}
    Path(report).write_text(json.dumps(
        {"exit_code": code, "scan_seconds": seconds, "io": measured, "io_total": after, "error": error}
    ))
    return code


if __name__ == "__main__":
    sys.exit(main())
