"""With the blob cache on, clients that pull the same files at once cause one upstream read per file
(app.services.fanout), and a flight that fails verification leaves every follower, and the cache, nothing."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from huggingface_hub import snapshot_download

from tests.integration.endpoint.conftest import APPROVED, Endpoint, StartEndpoint, cache_files

CLIENTS = 6  # pods starting at once


@pytest.fixture(scope="module")
def cached(start_endpoint: StartEndpoint, tmp_path_factory: pytest.TempPathFactory) -> Endpoint:
    return start_endpoint(hub_cache_dir=str(tmp_path_factory.mktemp("blob-cache")))


def pull_at_once(endpoint: Endpoint, tmp_path: Path, clients: int) -> list[str | BaseException]:
    def pull(n: int) -> str | BaseException:
        try:
            return snapshot_download(APPROVED, endpoint=endpoint.hub, token=False, cache_dir=tmp_path / f"c{n}")
        except Exception as exc:  # noqa: BLE001 - what each client got is the result
            return exc

    with ThreadPoolExecutor(clients) as pool:
        return list(pool.map(pull, range(clients)))


def test_clients_at_once_read_each_file_from_the_upstream_once(cached: Endpoint, tmp_path: Path) -> None:
    folders = pull_at_once(cached, tmp_path, CLIENTS)
    assert all(isinstance(f, str) for f in folders), folders
    files = sorted(p.name for p in Path(str(folders[0])).iterdir())
    assert cached.upstream.app.reads and set(cached.upstream.app.reads) == set(files)
    assert set(cached.upstream.app.reads.values()) == {1}, cached.upstream.app.reads
    source = cached.upstream.root / APPROVED
    for folder in folders:
        assert {p.name: p.read_bytes() for p in Path(str(folder)).iterdir()} == {
            name: (source / name).read_bytes() for name in files}


def test_a_tampered_flight_leaves_its_followers_and_the_cache_nothing(
        start_endpoint: StartEndpoint, tmp_path: Path) -> None:
    cache = tmp_path / "blob-cache"
    endpoint = start_endpoint(hub_cache_dir=str(cache))
    endpoint.upstream.app.tamper.add("config.json")
    endpoint.upstream.app.delay = 2.0  # the three clients' GETs all arrive while the one flight is held
    results = pull_at_once(endpoint, tmp_path, 3)
    assert all(isinstance(r, OSError) and "Consistency check failed" in str(r) for r in results), results
    for n in range(3):
        assert not [f for f in cache_files(tmp_path / f"c{n}") if f.endswith("/config.json")]
    blobs: Callable[[], list[Path]] = lambda: [p for p in cache.rglob("*") if p.is_file()]  # noqa: E731
    config = (endpoint.upstream.root / APPROVED / "config.json").read_bytes()
    assert all(p.read_bytes() != config[:-1] + bytes([config[-1] ^ 0xFF]) for p in blobs())
    assert endpoint.upstream.app.reads["config.json"] == 1  # one flight, followed by all three
