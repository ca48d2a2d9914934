"""X-Forwarded-For is believed from HFVET_FORWARDED_ALLOW_IPS only: the rate limit keys on the client
address, so a header anyone may send must not pick the bucket (against a real `hfvet serve`: uvicorn
reads the header, not the app)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.cli.serve import forwarded_allow_ips
from tests.integration.api.served import hfvet, live_server


@pytest.fixture(scope="module", params=["", "127.0.0.1,::1"], ids=["trust-nobody", "trust-loopback"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    tmp = tmp_path_factory.mktemp("forwarded")
    env = {"HFVET_DATABASE_URL": f"sqlite:///{tmp / 'store.db'}", "HFVET_RATE_LIMIT_BURST": "2",
           "HFVET_RATE_LIMIT_PER_SECOND": "0.001", "HFVET_FORWARDED_ALLOW_IPS": request.param}
    with live_server(env, tmp / "serve.log") as url:
        yield url, request.param


def anonymous_writes(url: str, addresses: list[str]) -> list[int]:
    """Unauthenticated posts (401 until the address's bucket is empty, then 429), each claiming an address."""
    return [httpx.post(f"{url}/webhooks/huggingface", json={}, headers={"X-Forwarded-For": address},
                       timeout=10).status_code for address in addresses]


def test_a_forwarded_address_picks_the_bucket_only_from_a_trusted_peer(served: tuple[str, str]) -> None:
    url, trusted = served
    answers = anonymous_writes(url, [f"203.0.113.{i}" for i in range(4)])
    if trusted:  # a proxy on this host: each client it forwards is a caller of its own
        assert answers == [404, 404, 404, 404]  # webhooks are off here: 404 past the limit, none spent twice
    else:  # nobody is trusted: every claimed address is this one peer, whose bucket runs out
        assert answers == [404, 404, 429, 429]


@pytest.mark.parametrize("value", ["proxy.internal", "10.0.0.1/8", "10.0.0.0/33", "127.0.0.1,nonsense"])
def test_an_entry_that_is_no_address_or_network_is_refused_naming_the_setting(value: str) -> None:
    with pytest.raises(ValueError, match="HFVET_FORWARDED_ALLOW_IPS"):
        forwarded_allow_ips(value)


def test_serve_will_not_start_with_such_an_entry(tmp_path: Path) -> None:
    result = hfvet("serve", "--port", "9", env={"HFVET_FORWARDED_ALLOW_IPS": "10.0.0.0/8,proxy.internal",
                                                "HFVET_DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}"})
    assert result.returncode == 2 and "HFVET_FORWARDED_ALLOW_IPS" in result.stderr, result.stderr


def test_addresses_networks_and_the_wildcard_are_taken_as_written() -> None:
    assert forwarded_allow_ips(" 10.0.0.0/8, ::1 ,192.0.2.7,*,") == ["10.0.0.0/8", "::1", "192.0.2.7", "*"]
    assert forwarded_allow_ips("") == []
