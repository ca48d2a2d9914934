"""Input limits at the edge: JSON nesting (every body, the webhook's too) and request headers, the
latter against a real `hfvet serve` (uvicorn with httptools), where they are bounded while they arrive."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient

from app.api.json_depth import too_deep
from tests.integration.api.served import live_server
from tests.integration.api.test_webhooks import SECRET, client_for, payload, post

DEEP = b"[" * 10_000 + b"]" * 10_000


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with client_for(tmp_path, monkeypatch, SECRET) as client:
        yield client


def error_code(answer: httpx.Response) -> str:
    code: str = answer.json()["error"]["code"]
    return code


def test_a_deeply_nested_webhook_is_a_json_400_and_the_next_request_is_served(client: TestClient) -> None:
    refused = post(client, DEEP)
    assert refused.status_code == 400 and error_code(refused) == "json-too-deep"
    assert post(client, payload()).status_code == 202


def test_nesting_just_past_the_limit_is_refused_and_at_it_is_not(client: TestClient) -> None:
    def nested(levels: int) -> bytes:  # a real payload, with one field nested `levels` deep in all
        return json.dumps(payload() | {"extra": json.loads("[" * (levels - 1) + "]" * (levels - 1))}).encode()

    assert post(client, nested(64)).status_code == 202
    assert error_code(post(client, nested(65))) == "json-too-deep"


def test_every_json_body_is_bounded_before_auth_or_routing(client: TestClient) -> None:
    for path in ("/reviews", "/no-such-route"):
        answer = client.post(path, content=DEEP, headers={"content-type": "application/json"})
        assert answer.status_code == 400 and error_code(answer) == "json-too-deep", path


def test_depth_counts_brackets_not_inside_strings() -> None:
    assert not too_deep(json.dumps({"text": "[" * 1000}).encode(), 64)
    assert not too_deep(b"[" * 100 + b" not json", 64)  # its reader refuses it as not JSON
    assert too_deep(b'[{"a": [1]}, [[]]]', 2) and not too_deep(b'[{"a": [1]}, [[]]]', 3)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("edge")
    env = {"HFVET_DATABASE_URL": f"sqlite:///{tmp / 'store.db'}", "HFVET_MAX_HEADER_BYTES": "16384",
           "HFVET_MAX_HEADERS": "50"}
    with live_server(env, tmp / "serve.log") as url:
        yield url


def raw_request(url: str, head: bytes) -> bytes:
    """Send ``head`` (a request line and headers) and read until the server closes or answers."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as conn:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.sendall(head)  # refused mid-send: what it answered is still readable
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
        return received


def test_a_huge_header_gets_431_from_a_real_server_which_keeps_serving(served: str) -> None:
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (2 * 1024 * 1024) + b"\r\n\r\n"
    answer = raw_request(served, head)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]["code"] == "headers-too-large"
    assert httpx.get(f"{served}/healthz", timeout=10).status_code == 200


def test_too_many_headers_get_431(served: str) -> None:
    many = b"".join(b"X-H%d: v\r\n" % i for i in range(60))
    answer = raw_request(served, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]


def test_headers_within_the_limits_are_served(served: str) -> None:
    headers = {f"X-H{i}": "v" * 200 for i in range(40)}
    assert httpx.get(f"{served}/healthz", headers=headers, timeout=10).status_code == 200
