"""bench/soak_trace.py: the event loop's scheduler figures and the GIL holders read from py-spy's output."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from soak_trace import SAMPLE_HZ, SchedStat, summary


def test_the_loop_thread_ran_and_waited_per_second() -> None:
    earlier, later = SchedStat(1_000_000, 0), SchedStat(301_000_000, 100_000_000)
    assert later.since(earlier, 1.0) == (300.0, 100.0)
    assert SchedStat.of(os.getpid()).ran_ns > 0  # this process's main thread has run


def test_gil_time_is_split_by_thread_and_the_loops_frames_leave_the_scaffolding_out(tmp_path: Path) -> None:
    raw = tmp_path / "00-vetting.txt"
    loop = "thread (1): MainThread;<module> (app/__main__.py:3);Runner.run (asyncio/runners.py:118)"
    raw.write_text(f"{loop};HfvetAPI.__call__ (app/api/fastgate.py:40) {SAMPLE_HZ // 2}\n"
                   f"thread (7): AnyIO worker thread;post_vet (app/api/routes/vet.py:50) {SAMPLE_HZ // 10}\n"
                   f"thread (8): hfvet-vet_0;save_report (app/db/repository.py:90) {SAMPLE_HZ // 20}\n")
    text = "\n".join(summary([raw], seconds=1.0))
    assert "event loop 500, AnyIO worker thread 100, hfvet-vet 50" in text
    assert "| `HfvetAPI.__call__ (app/api/fastgate.py)` | 500.0 |" in text
    assert "runners" not in text and "__main__" not in text
    assert "| `post_vet (app/api/routes/vet.py)` | 100.0 |" in text
