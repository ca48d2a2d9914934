"""The poller thread: calls its pass every interval, survives a failing pass, stops when told, off at 0."""

from __future__ import annotations

import threading
import time

import pytest

from app.jobs.poller import Poller


def wait_for(condition: threading.Event, seconds: float = 5.0) -> bool:
    return condition.wait(seconds)


def test_it_polls_repeatedly_and_a_failing_pass_does_not_stop_it(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[float] = []
    third = threading.Event()

    def poll() -> None:
        calls.append(time.monotonic())
        if len(calls) >= 3:
            third.set()
        if len(calls) == 1:
            raise RuntimeError("hub hiccup")

    poller = Poller(0.05, poll)
    poller.start()
    try:
        assert wait_for(third)
    finally:
        poller.stop()
    assert not poller.running
    assert "poll pass failed" in caplog.text
    done = len(calls)
    time.sleep(0.2)
    assert len(calls) == done  # stopped means stopped


def test_an_interval_of_zero_leaves_polling_off() -> None:
    poller = Poller(0, lambda: pytest.fail("polling is off"))
    poller.start()
    assert not poller.running
    poller.stop()


def test_the_first_pass_waits_one_interval() -> None:
    called = threading.Event()
    poller = Poller(30, called.set)
    poller.start()
    try:
        assert poller.running and not called.wait(0.2)
    finally:
        poller.stop()
    assert not poller.running
