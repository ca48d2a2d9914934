"""The Hub endpoint answers an approved commit as the upstream hub does: the same tree entries, siblings,
paths-info and file headers, so a client's cache (blob names, etags, sizes) is the one the Hub would give."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.integration.endpoint.conftest import APPROVED, Endpoint

HEADERS = ("x-repo-commit", "etag", "x-linked-etag", "x-linked-size", "content-length", "accept-ranges")


@pytest.fixture(scope="module")
def sha(endpoint: Endpoint) -> str:
    answer = httpx.get(f"{endpoint.url}/gate", params={"repo": APPROVED}, timeout=30)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["revision"])


def both(endpoint: Endpoint, path: str, **kwargs: Any) -> tuple[httpx.Response, httpx.Response]:
    method = kwargs.pop("method", "GET")
    upstream = httpx.request(method, f"{endpoint.upstream.url}/{path}", timeout=30, **kwargs)
    ours = httpx.request(method, f"{endpoint.hub}/{path}", timeout=30, **kwargs)
    assert upstream.status_code == ours.status_code == 200, (upstream.text, ours.text)
    return upstream, ours


def test_the_recursive_tree_is_the_upstream_tree(endpoint: Endpoint, sha: str) -> None:
    upstream, ours = both(endpoint, f"api/models/{APPROVED}/tree/{sha}", params={"recursive": "true"})
    assert ours.json() == upstream.json()
    assert ours.headers["x-repo-commit"] == sha


def test_siblings_with_blobs_are_the_upstream_siblings(endpoint: Endpoint, sha: str) -> None:
    upstream, ours = both(endpoint, f"api/models/{APPROVED}/revision/{sha}", params={"blobs": "true"})
    key = lambda s: s["rfilename"]  # noqa: E731
    assert sorted(ours.json()["siblings"], key=key) == sorted(upstream.json()["siblings"], key=key)
    assert ours.json()["sha"] == upstream.json()["sha"] == sha


def test_paths_info_is_the_upstream_answer(endpoint: Endpoint, sha: str) -> None:
    form = {"paths": ["config.json", "model-00001-of-00003.safetensors", "nope.bin"], "expand": "false"}
    upstream, ours = both(endpoint, f"api/models/{APPROVED}/paths-info/{sha}", method="POST", data=form)
    assert ours.json() == upstream.json() and len(ours.json()) == 2


@pytest.mark.parametrize("name", ["config.json", "model-00001-of-00003.safetensors"])
def test_file_headers_are_the_upstream_headers(endpoint: Endpoint, sha: str, name: str) -> None:
    upstream, ours = both(endpoint, f"{APPROVED}/resolve/{sha}/{name}", method="HEAD")
    assert {h: ours.headers.get(h) for h in HEADERS} == {h: upstream.headers.get(h) for h in HEADERS}
    assert not [h for h in ours.headers if h.lower().startswith("x-xet")]


def test_a_branch_head_is_redirected_to_its_commit_on_the_same_origin(endpoint: Endpoint, sha: str) -> None:
    answer = httpx.head(f"{endpoint.hub}/{APPROVED}/resolve/main/config.json", timeout=30)
    assert answer.status_code == 307 and answer.headers["x-repo-commit"] == sha
    assert answer.headers["location"] == f"{endpoint.hub}/{APPROVED}/resolve/{sha}/config.json"
