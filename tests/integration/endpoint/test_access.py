"""Who may pull through the Hub endpoint, what the audit log says they pulled, and what the upstream sees.

Clients send an hfvet token as their HF_TOKEN; with reads open none is needed, but a token that is sent must
be live; HFVET_READ_AUTH makes a reader token necessary. The client's token never reaches the upstream hub.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from huggingface_hub import HfApi, hf_hub_download, snapshot_download
from huggingface_hub.errors import GatedRepoError, HfHubHTTPError

from tests.integration.endpoint.bytes_probes import pull_rows, upstream_bytes
from tests.integration.endpoint.conftest import APPROVED, UNVETTED, Endpoint, StartEndpoint, Upstream

MAX_POLLS = 240  # a queued vet of the small example repo is decided long before this many polls


@pytest.fixture(scope="module")
def guarded(start_endpoint: StartEndpoint) -> Endpoint:
    return start_endpoint(read_auth="1")


def test_reads_open_need_no_token_and_record_anonymous(endpoint: Endpoint, upstream: Upstream,
                                                       hf_cache: Path) -> None:
    before = len(pull_rows(endpoint))
    path = hf_hub_download(APPROVED, "config.json", endpoint=endpoint.hub, cache_dir=hf_cache, token=False)
    assert Path(path).read_bytes() == upstream_bytes(upstream, APPROVED, "config.json")
    rows = pull_rows(endpoint)[before:]
    assert [(r.actor, r.detail.path, r.detail.source) for r in rows] == [("anonymous", "config.json", "upstream")]


@pytest.mark.parametrize("token", ["hf_notours", "revoked"])
def test_a_token_that_is_not_a_live_hfvet_token_is_refused(endpoint: Endpoint, hf_cache: Path, token: str) -> None:
    secret = endpoint.tokens.get(token, token)
    before = len(pull_rows(endpoint))
    with pytest.raises(HfHubHTTPError) as raised:
        hf_hub_download(APPROVED, "config.json", endpoint=endpoint.hub, cache_dir=hf_cache, token=secret)
    assert raised.value.response is not None
    assert raised.value.response.status_code == 401
    assert "hfvet reader token" in str(raised.value)
    assert len(pull_rows(endpoint)) == before


def test_read_auth_refuses_a_client_without_a_token(guarded: Endpoint, hf_cache: Path) -> None:
    with pytest.raises(HfHubHTTPError) as raised:
        hf_hub_download(APPROVED, "config.json", endpoint=guarded.hub, cache_dir=hf_cache, token=False)
    assert raised.value.response is not None
    assert raised.value.response.status_code == 401
    assert "hfvet reader token" in str(raised.value)
    assert pull_rows(guarded) == []


def test_read_auth_serves_a_reader_and_records_each_file(guarded: Endpoint, upstream: Upstream,
                                                         hf_cache: Path) -> None:
    reader = guarded.tokens["reader"]
    sha = HfApi(endpoint=guarded.hub, token=reader).model_info(APPROVED).sha
    before = len(pull_rows(guarded))
    upstream.app.seen_auth.clear()
    folder = snapshot_download(APPROVED, endpoint=guarded.hub, cache_dir=hf_cache, token=reader)
    files = sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*") if p.is_file())
    assert files
    rows = pull_rows(guarded)[before:]
    assert {(r.actor, r.subject) for r in rows} == {("token:reader-token", f"{APPROVED}@{sha}")}
    assert sorted(r.detail.path for r in rows) == files  # one row per file
    for row in rows:
        assert row.detail.size == len(upstream_bytes(upstream, APPROVED, row.detail.path))
    assert upstream.app.seen_auth  # the files came from the upstream...
    assert all(reader not in (auth or "") for auth in upstream.app.seen_auth)  # ...never with the client's token
    assert set(upstream.app.seen_auth) == {None}  # and this server has no HF_TOKEN of its own


def test_head_requests_record_no_pull(guarded: Endpoint) -> None:
    before = len(pull_rows(guarded))
    auth = {"Authorization": f"Bearer {guarded.tokens['reader']}"}
    for path in ("config.json", "model-00001-of-00003.safetensors"):
        head = httpx.head(f"{guarded.hub}/{APPROVED}/resolve/main/{path}", headers=auth, follow_redirects=True)
        assert head.status_code == 200
    probe = httpx.get(f"{guarded.hub}/{APPROVED}/resolve/main/config.json", headers=auth | {"Range": "bytes=0-0"})
    assert probe.status_code == 206
    assert len(pull_rows(guarded)) == before  # a HEAD, or a range short of the last byte, is not a pull


def test_an_unvetted_repo_is_vetted_on_demand_then_refused(start_endpoint: StartEndpoint) -> None:
    ep = start_endpoint(hub_vet_unvetted="1")
    first = httpx.get(f"{ep.hub}/api/models/{UNVETTED}", timeout=30)
    assert first.status_code == 503
    assert int(first.headers["retry-after"]) > 0
    assert "a vet of" in first.headers["x-error-message"]
    assert "queued" in first.headers["x-error-message"]
    decided = poll_until_vetted(ep, UNVETTED)
    assert decided["approved"] is False
    assert decided["reasons"]
    with pytest.raises(GatedRepoError) as raised:
        HfApi(endpoint=ep.hub, token=False).model_info(UNVETTED)
    assert raised.value.response is not None
    assert raised.value.response.status_code == 403
    message = str(raised.value)
    assert "hfvet refused" in message
    assert all(reason.rstrip(". ") in message for reason in decided["reasons"])


def poll_until_vetted(ep: Endpoint, repo: str) -> dict[str, Any]:
    """GET /gate until it names a verdict; bounded by a count of polls."""
    for _ in range(MAX_POLLS):
        doc = httpx.get(f"{ep.url}/gate", params={"repo": repo, "revision": "main"}, timeout=30).json()
        if "verdict" in doc:
            return dict(doc)
        time.sleep(0.25)
    raise AssertionError(f"{repo} still not vetted after {MAX_POLLS} polls: {doc}")
