"""The Hub endpoint's blob cache (HFVET_HUB_CACHE_DIR): each approved file read upstream once, verified, kept
under its content id, and served from there to every later client; nothing unverified is ever kept."""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
import pytest
from huggingface_hub import HfApi, hf_hub_download, snapshot_download

from tests.integration.endpoint.bytes_probes import (
    BIG_FILE,
    add_big_repo,
    cache_temp_files,
    cached_blobs,
    metric,
    pull_rows,
    upstream_bytes,
)
from tests.integration.endpoint.conftest import APPROVED, Endpoint, StartEndpoint, Upstream, vet

SHARD = "model-00002-of-00003.safetensors"


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hub-cache")


@pytest.fixture(scope="module")
def cached(start_endpoint: StartEndpoint, cache_dir: Path, upstream: Upstream) -> Endpoint:
    ep = start_endpoint(hub_cache_dir=str(cache_dir))
    vet(upstream, ep.store_url, add_big_repo(upstream))
    return ep


def manifest(ep: Endpoint) -> dict[str, str]:
    """APPROVED's files by path, with the id the blob cache names each by (sha256, else git blob id)."""
    info = HfApi(endpoint=ep.hub, token=False).model_info(APPROVED, files_metadata=True)
    return {s.rfilename: s.lfs.sha256 if s.lfs else str(s.blob_id) for s in info.siblings or []}


def content_id(data: bytes, lfs: bool) -> str:
    if lfs:
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def test_two_clients_read_each_file_upstream_once(cached: Endpoint, upstream: Upstream, cache_dir: Path,
                                                  tmp_path: Path) -> None:
    files = manifest(cached)
    upstream.app.reads.clear()
    hits, pulls = metric(cached, "hfvet_hub_cache_hits_total"), len(pull_rows(cached))
    first = snapshot_download(APPROVED, endpoint=cached.hub, cache_dir=tmp_path / "one", token=False)
    second = snapshot_download(APPROVED, endpoint=cached.hub, cache_dir=tmp_path / "two", token=False)
    for path in files:
        assert (Path(first) / path).read_bytes() == upstream_bytes(upstream, APPROVED, path)
        assert (Path(second) / path).read_bytes() == upstream_bytes(upstream, APPROVED, path)
    assert {path: upstream.app.reads[path] for path in files} == dict.fromkeys(files, 1)
    assert metric(cached, "hfvet_hub_cache_hits_total") == hits + len(files)
    rows = pull_rows(cached)[pulls:]
    assert sorted(r.detail.path for r in rows if r.detail.source == "cache") == sorted(files)
    blobs = cached_blobs(cache_dir)
    for path, blob in files.items():
        data = upstream_bytes(upstream, APPROVED, path)
        assert blob == content_id(data, lfs=path.endswith(".safetensors"))
        assert blobs[blob] == len(data)
    assert cache_temp_files(cache_dir) == []


def test_ranged_reads_after_a_full_read_come_from_the_cache(cached: Endpoint, upstream: Upstream,
                                                           tmp_path: Path) -> None:
    hf_hub_download(APPROVED, SHARD, endpoint=cached.hub, cache_dir=tmp_path, token=False)
    data = upstream_bytes(upstream, APPROVED, SHARD)
    upstream.app.reads.clear()
    hits = metric(cached, "hfvet_hub_cache_hits_total")
    for start, end in ((0, 7), (1000, 5000), (len(data) - 3, len(data) + 10)):
        response = httpx.get(f"{cached.hub}/{APPROVED}/resolve/main/{SHARD}",
                             headers={"Range": f"bytes={start}-{end}"}, timeout=30)
        assert response.status_code == 206
        assert response.content == data[start:end + 1]
    assert upstream.app.reads[SHARD] == 0
    assert metric(cached, "hfvet_hub_cache_hits_total") == hits + 3


def test_a_tampered_file_leaves_nothing_in_the_cache(cached: Endpoint, upstream: Upstream, cache_dir: Path,
                                                     tmp_path: Path) -> None:
    data = upstream_bytes(upstream, "nvidia/Big-Vocab", BIG_FILE)
    blob = content_id(data, lfs=False)
    upstream.app.tamper.add(BIG_FILE)
    with pytest.raises(OSError, match="Consistency check failed"):
        hf_hub_download("nvidia/Big-Vocab", BIG_FILE, endpoint=cached.hub, cache_dir=tmp_path, token=False)
    assert blob not in cached_blobs(cache_dir)
    assert cache_temp_files(cache_dir) == []
    upstream.app.tamper.clear()  # the upstream mends: the next read is verified, kept and served
    path = hf_hub_download("nvidia/Big-Vocab", BIG_FILE, endpoint=cached.hub, cache_dir=tmp_path, token=False)
    assert Path(path).read_bytes() == data
    assert cached_blobs(cache_dir)[blob] == len(data)


def test_a_cache_too_small_keeps_nothing_big_and_still_serves(start_endpoint: StartEndpoint, upstream: Upstream,
                                                              tmp_path: Path) -> None:
    root = tmp_path / "small-cache"
    ep = start_endpoint(hub_cache_dir=str(root), hub_cache_max_bytes="1000")
    folder = snapshot_download(APPROVED, endpoint=ep.hub, cache_dir=tmp_path / "client", token=False)
    for path in manifest(ep):
        assert (Path(folder) / path).read_bytes() == upstream_bytes(upstream, APPROVED, path)
    blobs = cached_blobs(root)
    assert sum(blobs.values()) <= 1000
    assert all(size <= 1000 for size in blobs.values())
    assert cache_temp_files(root) == []
    upstream.app.reads.clear()
    hf_hub_download(APPROVED, SHARD, endpoint=ep.hub, cache_dir=tmp_path / "again", token=False)
    assert upstream.app.reads[SHARD] == 1  # never kept, so read again
