"""The hub retry policy: what failed fast is retried, what stayed silent once at most, and a vet's
other calls do not wait again for a hub that went silent."""

from __future__ import annotations

import time

import httpx2
import pytest

from app.sources.hub_errors import HubStalled, HubTimeout, HubUnreachable
from app.sources.hub_http import RetryPolicy
from app.sources.hub_wire import Deadline, Retry, Silence, mapped_errors


class Calls:
    """A hub call that fails with the queued ``Retry``s, then answers."""

    def __init__(self, *failures: Retry) -> None:
        self.failures = list(failures)
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        if self.failures:
            raise self.failures.pop(0)
        return "answer"


def silent() -> Retry:
    return Retry("ReadTimeout: the hub at http://hub sent nothing for 10s", silent=True)


def fast() -> Retry:
    return Retry("HTTP 503")


def later() -> Deadline:
    return Deadline.within(60, "a test's minute")


def test_a_silent_failure_is_retried_once_and_a_fast_one_four_times() -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(sleep=sleeps.append)

    quiet = Calls(*[silent() for _ in range(5)])
    with pytest.raises(HubStalled, match=r"the hub stalled; giving up after 2 attempts \(ReadTimeout: the hub at "):
        policy.run("file tree", quiet, later())
    assert quiet.count == 2 and sleeps == [0.5]

    sleeps.clear()
    failing = Calls(*[fast() for _ in range(5)])
    with pytest.raises(HubUnreachable, match="giving up after 5 attempts") as raised:
        policy.run("file tree", failing, later())
    assert not isinstance(raised.value, HubStalled)
    assert failing.count == 5 and sleeps == [0.5, 1.0, 2.0, 4.0]


def test_fast_failures_do_not_use_up_the_silent_retry() -> None:
    sleeps: list[float] = []
    mixed = Calls(fast(), silent(), fast(), fast())
    assert RetryPolicy(sleep=sleeps.append).run("model info", mixed, later()) == "answer"
    assert mixed.count == 5

    twice = Calls(fast(), silent(), fast(), silent())
    with pytest.raises(HubStalled, match="giving up after 4 attempts"):
        RetryPolicy(sleep=sleeps.append).run("model info", twice, later())


def test_a_silent_last_attempt_is_a_stall_that_the_rest_of_the_vet_hears_of() -> None:
    silence = Silence()
    silence.check("GET a.bin")  # nothing stalled yet
    with pytest.raises(HubStalled):
        RetryPolicy(retries=0).run("GET config.json bytes 0-9", Calls(silent()), later(), silence)
    with pytest.raises(HubStalled, match=r"GET b\.bin: not sent, the hub stalled earlier in this vet: "
                                         r"GET config\.json bytes 0-9: the hub stalled"):
        silence.check("GET b.bin")


def test_a_silent_retry_is_not_begun_past_the_deadline() -> None:
    calls = Calls(silent(), silent())
    soon = Deadline.within(0.2, "the vet's 0.2s budget")
    with pytest.raises(HubTimeout, match=r"the vet's 0\.2s budget runs out before the next attempt") as raised:
        RetryPolicy(backoff=0.5).run("tree", calls, soon)
    assert not isinstance(raised.value, HubStalled) and calls.count == 1


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (httpx2.ReadTimeout, "ReadTimeout: the hub at http://hub.test:8080 sent nothing for 10s"),
        (httpx2.ConnectTimeout, "ConnectTimeout: the hub at http://hub.test:8080 accepted no connection for 5s"),
    ],
)
def test_a_timeout_is_a_silent_retry_naming_the_hub(error: type[httpx2.TimeoutException], said: str) -> None:
    request = httpx2.Request("GET", "http://hub.test:8080/api/models/a/b",
                             extensions={"timeout": {"connect": 5.0, "read": 10.0, "write": 10.0, "pool": 5.0}})
    with pytest.raises(Retry) as raised, mapped_errors("a/b", "main"):
        raise error("timed out", request=request)
    assert raised.value.silent and str(raised.value) == said
    with pytest.raises(Retry) as refused, mapped_errors("a/b", "main"):
        raise httpx2.ConnectError("connection refused", request=request)
    assert not refused.value.silent


def test_a_timeout_that_the_deadline_cut_short_is_the_deadline_not_a_stall() -> None:
    silence = Silence()
    cut = Deadline.within(0.05, "the vet's 1s budget")

    def slow_then_cut() -> str:
        time.sleep(0.1)  # the socket wait was capped at what the deadline left
        raise silent()

    with pytest.raises(HubTimeout, match=r"the vet's 1s budget ran out \(ReadTimeout") as raised:
        RetryPolicy(silent_retries=0).run("GET a.bin", slow_then_cut, cut, silence)
    assert not isinstance(raised.value, HubStalled) and silence.first is None
