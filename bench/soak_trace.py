"""What the API process does while the soak's gate load runs (bench/bench_soak.py --trace DIR).

Two views per round, side by side for the vetting and idle rounds:
- the kernel's scheduler statistics of the API's event-loop thread (/proc/PID/task/PID/schedstat):
  CPU time it ran, and time it was runnable but waited for a core (the 2 shared cores taken by
  others: the vet processes, the load generator, the fixture hub);
- py-spy (`pip install py-spy`, pinned in the dev extra) sampling the process with `--gil`: each
  sample is the thread holding the GIL, so the share of samples on threads other than the event
  loop is GIL time the loop may have waited for, and the loop's own samples say what a request costs.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SAMPLE_HZ = 200


@dataclass(frozen=True)
class SchedStat:
    """Cumulative nanoseconds a thread ran and waited on a run queue (Linux schedstat)."""

    ran_ns: int
    waited_ns: int

    @classmethod
    def of(cls, pid: int) -> SchedStat:
        fields = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()
        return cls(int(fields[0]), int(fields[1]))

    def since(self, earlier: SchedStat, seconds: float) -> tuple[float, float]:
        """(ms ran, ms waited for a core) per second of wall time between ``earlier`` and this."""
        per = 1e6 * max(seconds, 1e-9)
        return (self.ran_ns - earlier.ran_ns) / per, (self.waited_ns - earlier.waited_ns) / per


def py_spy(pid: int, seconds: int, out: Path) -> subprocess.Popen[bytes]:
    """py-spy recording ``pid`` for ``seconds`` into ``out`` (collapsed stacks, GIL holder per sample)."""
    tool = shutil.which("py-spy")
    if tool is None:
        raise SystemExit("py-spy is not installed (pip install -e '.[dev]')")
    command = [tool, "record", "--pid", str(pid), "--duration", str(seconds), "--rate", str(SAMPLE_HZ),
               "--gil", "--threads", "--nonblocking", "--format", "raw", "-o", str(out)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


_LINE = re.compile(r":\d+\)$")


def _stacks(paths: Iterable[Path]) -> Iterable[tuple[str, list[str], int]]:
    """(thread name, frames outermost first, samples) of py-spy's raw output files."""
    for path in paths:
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            frames = stack.split(";")
            thread = re.sub(r"^thread \(\d+\): ", "", frames[0])
            yield thread, [_LINE.sub(")", f) for f in frames[1:]], int(count)


def summary(paths: list[Path], seconds: float, top: int = 12) -> list[str]:
    """Lines of markdown: GIL held per thread kind (ms per second), and the event loop's heaviest frames."""
    holders: Counter[str] = Counter()
    loop_frames: Counter[str] = Counter()
    other_frames: Counter[str] = Counter()
    for thread, frames, count in _stacks(paths):
        kind = "event loop" if thread == "MainThread" else re.sub(r"[_ ]?\d+$", "", thread)
        holders[kind] += count
        into = loop_frames if kind == "event loop" else other_frames
        for frame in dict.fromkeys(frames):  # inclusive: each frame once per sample
            into[frame] += count
    per_ms = 1000.0 / SAMPLE_HZ / max(seconds, 1e-9)
    lines = ["GIL held, ms per second: " + ", ".join(f"{k} {n * per_ms:.0f}" for k, n in holders.most_common())]
    lines += ["", "| event loop, inclusive | ms/s |", "|---|---|"]
    lines += [f"| `{frame}` | {n * per_ms:.1f} |" for frame, n in _interesting(loop_frames, top)]
    lines += ["", "| other threads, inclusive | ms/s |", "|---|---|"]
    lines += [f"| `{frame}` | {n * per_ms:.1f} |" for frame, n in _interesting(other_frames, top)]
    return lines


_SCAFFOLD = re.compile(r"runpy|typer|click|app/cli/|uvicorn/main|uvicorn/server|asyncio/runners|uvicorn/_compat"
                       r"|threading\.py|concurrent/futures/thread|anyio/_backends|app/__main__")


def _interesting(frames: Counter[str], top: int) -> list[tuple[str, int]]:
    """The heaviest frames, less the start-up and thread scaffolding every sample passes through."""
    return [(f, n) for f, n in frames.most_common() if not _SCAFFOLD.search(f)][:top]


def traced(folder: Path | None, seconds: float) -> str:
    """The markdown of every round's recording in ``folder``, vetting rounds beside idle ones ('' if none)."""
    if folder is None:
        return ""
    lines: list[str] = []
    for kind in ("vetting", "idle"):
        files = sorted(p for p in folder.glob(f"*-{kind}.txt") if p.stat().st_size)
        if files:
            lines += ["", f"### py-spy --gil, {kind} rounds ({len(files)})", "", *summary(files, seconds * len(files))]
    return "\n".join(lines)
