"""Hub errors name the hub they asked and the setting that changes it (HF_ENDPOINT), and a host name that
does not resolve fails at once instead of being retried five times (issue 27, item 4).

Counted, not timed: the retry policy's sleep is a list, and the hub is a name under `.invalid`, which
never resolves (the sandbox allows only loopback, and resolution fails there without a network wait).
"""

from __future__ import annotations

import socket

import httpx2
import pytest

from app.sources.hub import HubClient, HubSource, resolve_revision
from app.sources.hub_errors import HubRepoNotFound, HubUnreachable, named, unresolved_host
from app.sources.hub_wire import Retry, mapped_errors
from tests.fakes import count_hub_sends

NOWHERE = "http://hfvet-no-such-host.invalid"


def test_a_host_that_does_not_resolve_is_tried_once_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    sends = count_hub_sends(monkeypatch)
    sleeps: list[float] = []
    hub = HubClient.create(NOWHERE, token=False, sleep=sleeps.append)
    with pytest.raises(HubUnreachable) as raised:
        resolve_revision("nvidia/some-model", "main", hub)
    message = str(raised.value)
    assert len(sends) == 1 and sleeps == []  # no retry, no backoff
    assert "does not resolve" in message
    assert NOWHERE in message and "HF_ENDPOINT" in message
    with pytest.raises(HubUnreachable, match="HF_ENDPOINT"):
        HubSource.open("nvidia/some-model", "main", hub=hub)
    assert len(sends) == 2 and sleeps == []


def test_a_refused_connection_is_still_retried() -> None:
    request = httpx2.Request("GET", "http://127.0.0.1:9/")
    with pytest.raises(Retry), mapped_errors("a/b", "main"):
        raise httpx2.ConnectError("[Errno 111] Connection refused", request=request)


def test_name_resolution_is_told_from_the_exception_chain() -> None:
    try:
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except socket.gaierror as low:
            raise httpx2.ConnectError(str(low)) from low
    except httpx2.ConnectError as exc:
        assert unresolved_host(exc)
    assert not unresolved_host(httpx2.ConnectError("[Errno 111] Connection refused"))
    assert unresolved_host(httpx2.ConnectError(socket.gaierror(-3, "Temporary failure in name resolution")))


def test_naming_keeps_the_class_and_names_once() -> None:
    first = named(HubRepoNotFound("a/b not found"), "https://huggingface.co")
    assert isinstance(first, HubRepoNotFound)
    assert str(first) == "a/b not found [hub https://huggingface.co; HF_ENDPOINT sets another]"
    assert named(first, "https://huggingface.co") is first
