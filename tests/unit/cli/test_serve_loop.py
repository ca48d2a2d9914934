"""`hfvet serve` shortens how long its event loop can wait for the GIL held by one of its threads.

The soak (bench/bench_soak.py --trace) found the server's threads (storing reports, answering POST /vet)
holding the GIL ~60 ms a second while vets ran; at CPython's default switch interval each hold could keep
a gate answer waiting 5 ms.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

import app.server
from app.cli import serve as serve_cli


def test_serve_lets_the_loop_take_the_gil_back_within_a_millisecond(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    monkeypatch.setattr(app.server, "create_app", lambda settings, **_: object())
    monkeypatch.setattr(serve_cli, "run_until_stopped",
                        lambda *a, **k: seen.setdefault("interval", sys.getswitchinterval()))
    before = sys.getswitchinterval()
    try:
        serve_cli.serve(host="127.0.0.1", port=0, access_log=False)
    finally:
        sys.setswitchinterval(before)
    assert seen["interval"] == pytest.approx(serve_cli.LOOP_GIL_WAIT_SECONDS) and seen["interval"] <= 0.001
