"""The Hub endpoint sends only bytes that match the approved manifest, and the client keeps nothing else.

A live server pulls from a fixture hub that can flip a file's last byte (``tamper``: same length, only the
hash tells) or die half-way (``cut``); the real huggingface_hub client and raw httpx pull through it.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from huggingface_hub import HfApi, HfFileSystem, hf_hub_download
from huggingface_hub.errors import GatedRepoError

from tests.integration.endpoint.bytes_probes import (
    BIG_FILE,
    add_big_repo,
    metric,
    server_log,
    upstream_bytes,
)
from tests.integration.endpoint.conftest import APPROVED, Endpoint, Upstream, cache_files, vet

SHARD = "model-00001-of-00003.safetensors"
FAILURES = "hfvet_hub_verification_failures_total"


@pytest.fixture(scope="module")
def big(endpoint: Endpoint, upstream: Upstream) -> str:
    repo = add_big_repo(upstream)
    vet(upstream, endpoint.store_url, repo)
    return repo


@pytest.fixture(scope="module")
def sha(endpoint: Endpoint) -> str:
    commit = HfApi(endpoint=endpoint.hub, token=False).model_info(APPROVED).sha
    assert commit is not None
    return commit


def etag_of(ep: Endpoint, repo: str, path: str) -> str:
    head = httpx.head(f"{ep.hub}/{repo}/resolve/main/{path}", follow_redirects=True)
    assert head.status_code == 200, head.headers
    return head.headers["etag"].strip('"')


def nothing_kept(cache: Path, path: str, etag: str) -> None:
    """No snapshot entry, no blob, no temp file of ``path`` (its lock file under .locks/ is harmless)."""
    files = [f for f in cache_files(cache) if not f.startswith(".locks/")]
    assert not [f for f in files if f.endswith(f"/{path}") or etag in f or f.endswith(".incomplete")], files
    assert not [f for f in files if "/blobs/" in f], files


def resolve(ep: Endpoint, repo: str, rev: str, path: str, **headers: str) -> httpx.Response:
    return httpx.get(f"{ep.hub}/{repo}/resolve/{rev}/{path}", headers=headers, timeout=30)


def test_a_tampered_file_is_refused_by_the_client_and_never_cached(endpoint: Endpoint, upstream: Upstream,
                                                                    hf_cache: Path) -> None:
    etag = etag_of(endpoint, APPROVED, "config.json")
    before = metric(endpoint, FAILURES)
    upstream.app.tamper.add("config.json")
    with pytest.raises(OSError, match="Consistency check failed"):
        hf_hub_download(APPROVED, "config.json", endpoint=endpoint.hub, cache_dir=hf_cache, token=False)
    nothing_kept(hf_cache, "config.json", etag)
    assert metric(endpoint, FAILURES) == before + 1
    assert "NOT SERVED" in server_log(endpoint)


def test_a_tampered_shard_is_refused_too(endpoint: Endpoint, upstream: Upstream, hf_cache: Path) -> None:
    etag = etag_of(endpoint, APPROVED, SHARD)
    upstream.app.tamper.add(SHARD)
    with pytest.raises(OSError, match="Consistency check failed"):
        hf_hub_download(APPROVED, SHARD, endpoint=endpoint.hub, cache_dir=hf_cache, token=False)
    nothing_kept(hf_cache, SHARD, etag)


def test_a_large_tampered_file_ends_short_after_its_verified_chunks(endpoint: Endpoint, upstream: Upstream,
                                                                     big: str, hf_cache: Path) -> None:
    size = len(upstream_bytes(upstream, big, BIG_FILE))
    etag = etag_of(endpoint, big, BIG_FILE)
    upstream.app.tamper.add(BIG_FILE)
    with httpx.stream("GET", f"{endpoint.hub}/{big}/resolve/main/{BIG_FILE}", timeout=30) as response:
        assert response.status_code == 200
        got = sum(len(chunk) for chunk in response.iter_bytes())  # a clean end: no error while reading
    assert 1 << 20 <= got < size  # the chunks before the last went out; the last never did
    with pytest.raises(OSError, match="Consistency check failed"):
        hf_hub_download(big, BIG_FILE, endpoint=endpoint.hub, cache_dir=hf_cache, token=False)
    nothing_kept(hf_cache, BIG_FILE, etag)


def test_a_large_file_untampered_arrives_whole(endpoint: Endpoint, upstream: Upstream, big: str,
                                               hf_cache: Path) -> None:
    path = hf_hub_download(big, BIG_FILE, endpoint=endpoint.hub, cache_dir=hf_cache, token=False)
    assert Path(path).read_bytes() == upstream_bytes(upstream, big, BIG_FILE)


def test_a_cut_upstream_keeps_nothing_and_is_logged(endpoint: Endpoint, upstream: Upstream, hf_cache: Path) -> None:
    etag = etag_of(endpoint, APPROVED, SHARD)
    before = metric(endpoint, "hfvet_hub_upstream_failures_total")
    upstream.app.cut.add(SHARD)
    with pytest.raises(OSError, match="Consistency check failed"):
        hf_hub_download(APPROVED, SHARD, endpoint=endpoint.hub, cache_dir=hf_cache, token=False)
    nothing_kept(hf_cache, SHARD, etag)
    assert metric(endpoint, "hfvet_hub_upstream_failures_total") == before + 1
    assert f"{SHARD}: the upstream failed" in server_log(endpoint)


def test_an_open_ended_range_is_the_exact_suffix(endpoint: Endpoint, upstream: Upstream, sha: str) -> None:
    data = upstream_bytes(upstream, APPROVED, SHARD)
    response = resolve(endpoint, APPROVED, sha, SHARD, Range="bytes=1000-")
    assert response.status_code == 206
    assert response.headers["content-range"] == f"bytes 1000-{len(data) - 1}/{len(data)}"
    assert response.content == data[1000:]


def test_the_first_byte_probe_answers_with_commit_and_etag(endpoint: Endpoint, upstream: Upstream,
                                                           sha: str) -> None:
    data = upstream_bytes(upstream, APPROVED, SHARD)
    response = resolve(endpoint, APPROVED, "main", SHARD, Range="bytes=0-0")  # the Rust hf-hub crate's probe
    assert response.status_code == 206
    assert response.headers["content-range"] == f"bytes 0-0/{len(data)}"
    assert response.headers["x-repo-commit"] == sha
    assert response.headers["etag"] == f'"{etag_of(endpoint, APPROVED, SHARD)}"'
    assert response.content == data[:1]


def test_a_range_past_the_end_is_clamped(endpoint: Endpoint, upstream: Upstream, sha: str) -> None:
    data = upstream_bytes(upstream, APPROVED, SHARD)
    response = resolve(endpoint, APPROVED, sha, SHARD, Range=f"bytes=100-{len(data) + 5000}")
    assert response.status_code == 206
    assert response.headers["content-range"] == f"bytes 100-{len(data) - 1}/{len(data)}"
    assert response.content == data[100:]


def test_a_range_from_the_end_is_not_satisfiable(endpoint: Endpoint, upstream: Upstream, sha: str) -> None:
    size = len(upstream_bytes(upstream, APPROVED, SHARD))
    reads = upstream.app.reads[SHARD]
    response = resolve(endpoint, APPROVED, sha, SHARD, Range=f"bytes={size}-")
    assert response.status_code == 416
    assert response.headers["content-range"] == f"bytes */{size}"
    assert upstream.app.reads[SHARD] == reads


def test_a_ranged_read_reads_the_whole_file_upstream(endpoint: Endpoint, upstream: Upstream, sha: str) -> None:
    data = upstream_bytes(upstream, APPROVED, SHARD)
    for n, spec in enumerate(("bytes=0-7", "bytes=8-99", f"bytes={len(data) - 10}-"), start=1):
        assert resolve(endpoint, APPROVED, sha, SHARD, Range=spec).status_code == 206
        assert upstream.app.reads[SHARD] == n  # no cache: one whole upstream read per ranged request


def test_a_range_far_from_a_tampered_end_is_not_sent(endpoint: Endpoint, upstream: Upstream, big: str) -> None:
    """Verification is complete whatever the range: the flipped byte is the file's last, the range its first
    ten, and they are held until the whole file was hashed."""
    upstream.app.tamper.add(BIG_FILE)
    response = resolve(endpoint, big, "main", BIG_FILE, Range="bytes=0-9")
    assert response.status_code == 206
    assert len(response.content) < 10
    upstream.app.tamper.clear()
    tampered = resolve(endpoint, APPROVED, "main", "config.json", Range="bytes=0-99")
    assert tampered.content == upstream_bytes(upstream, APPROVED, "config.json")[:100]  # untampered: all of it
    upstream.app.tamper.add("config.json")
    assert len(resolve(endpoint, APPROVED, "main", "config.json", Range="bytes=0-99").content) < 100


def test_hf_file_system_reads_ranges_exactly(endpoint: Endpoint, upstream: Upstream, sha: str) -> None:
    data = upstream_bytes(upstream, APPROVED, SHARD)
    fs = HfFileSystem(endpoint=endpoint.hub, token=False, skip_instance_cache=True)
    with fs.open(f"{APPROVED}@{sha}/{SHARD}", "rb", block_size=4096) as f:
        first = f.read(8)
        header_size = int.from_bytes(first, "little")
        header = f.read(header_size)
    assert first == data[:8]
    assert header == data[8:8 + header_size]
    assert header.startswith(b"{")


def test_an_approved_file_gone_upstream_is_refused_before_its_download(endpoint: Endpoint, upstream: Upstream,
                                                                        hf_cache: Path) -> None:
    """A squashed history or a deleted repo upstream: the client's HEAD is refused with the cause, so it raises
    GatedRepoError naming it, instead of a download that ends at 0 bytes."""
    upstream.app.gone.add("tokenizer.json")
    with pytest.raises(GatedRepoError, match=r"does not serve tokenizer\.json"):
        hf_hub_download(APPROVED, "tokenizer.json", endpoint=endpoint.hub, token=False, cache_dir=hf_cache)
    assert upstream.app.reads["tokenizer.json"] == 0  # never streamed
    assert not [f for f in cache_files(hf_cache) if f.endswith("/tokenizer.json")]
