"""bench_gate reads hey's summary right: the achieved rate, the p99, and every non-2xx or error counted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import bench_gate  # bench/ is a script folder, put on the path above

SUMMARY = """
Summary:
  Total:\t10.0012 secs
  Requests/sec:\t1994.3120

Latency distribution:
  10% in 0.0011 secs
  95% in 0.0042 secs
  99% in 0.0187 secs

Status code distribution:
  [200]\t19900 responses
{extra}
"""


def run_hey(monkeypatch: pytest.MonkeyPatch, extra: str) -> tuple[float, float, str]:
    asked: list[list[str]] = []

    def fake_run(argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        asked.append(argv)
        return subprocess.CompletedProcess(argv, 0, SUMMARY.format(extra=extra), "")

    monkeypatch.setattr(bench_gate.subprocess, "run", fake_run)
    result = bench_gate.hey("http://127.0.0.1:1/gate", 10, 8, 2000)
    assert asked == [["hey", "-z", "10s", "-c", "8", "-q", "250", "http://127.0.0.1:1/gate"]]
    return result


def test_a_clean_round(monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_hey(monkeypatch, "") == (1994.312, pytest.approx(18.7), "")


def test_non_2xx_and_errors_are_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = "  [503]\t12 responses\n\nError distribution:\n  [3]\tGet http://x: read: connection reset by peer\n"
    _, _, problems = run_hey(monkeypatch, extra)
    assert problems == "12 x 503; [3] Get http://x: read: connection reset by peer"
