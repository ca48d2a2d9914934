"""The Hub endpoint's blob cache: content-addressed, written whole or not at all, bounded LRU, shareable."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from app.services.blob_cache import BlobCache, BlobKey


def key_of(data: bytes) -> BlobKey:
    return ("sha256", hashlib.sha256(data).hexdigest())


def put(cache: BlobCache, data: bytes, *, mtime: float | None = None) -> BlobKey:
    key = key_of(data)
    with cache.writer(key, len(data)) as writer:
        writer.write(data)
        assert writer.commit()
    if mtime is not None:
        os.utime(cache.path_of(key), (mtime, mtime))
    return key


def read(cache: BlobCache, key: BlobKey) -> bytes | None:
    handle = cache.open(key)
    if handle is None:
        return None
    with handle:
        return handle.read()


def tmp_files(cache: BlobCache) -> list[Path]:
    return list(cache.tmp_dir.iterdir())


def test_a_committed_blob_reads_back_whole(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, max_bytes=1000)
    data = b"weights" * 20
    key = key_of(data)
    with cache.writer(key, len(data)) as writer:
        writer.write(data[:50])
        writer.write(data[50:])
        assert writer.commit() is True
    assert key in cache
    assert read(cache, key) == data
    assert cache.size_of(key) == len(data)
    assert cache.usage() == len(data)
    assert cache.path_of(key) == tmp_path / "sha256" / key[1][:2] / key[1]
    assert tmp_files(cache) == []


def test_git_blob_ids_are_keys_too(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, max_bytes=1000)
    key: BlobKey = ("git-sha1", "ab" * 20)
    with cache.writer(key, 3) as writer:
        writer.write(b"{}\n")
        writer.commit()
    assert read(cache, key) == b"{}\n"
    assert (tmp_path / "git-sha1" / "ab" / ("ab" * 20)).is_file()


def test_absent_blob_is_none(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, max_bytes=1000)
    key = key_of(b"never written")
    assert cache.open(key) is None
    assert cache.size_of(key) is None
    assert key not in cache


def test_abort_leaves_nothing(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, max_bytes=1000)
    key = key_of(b"data")
    writer = cache.writer(key, 4)
    writer.write(b"data")
    assert len(tmp_files(cache)) == 1
    writer.abort()
    writer.abort()
    assert key not in cache
    assert tmp_files(cache) == []
    with pytest.raises(ValueError, match="already"):
        writer.commit()


def test_an_uncommitted_writer_leaves_nothing_in_place(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, max_bytes=1000)
    key = key_of(b"data")
    with cache.writer(key, 4) as writer:
        writer.write(b"da")
    with pytest.raises(RuntimeError), cache.writer(key, 4) as writer:
        writer.write(b"data")
        raise RuntimeError("verification failed upstream")
    assert key not in cache
    assert cache.usage() == 0
    assert tmp_files(cache) == []


def test_a_short_or_long_blob_is_refused(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, max_bytes=1000)
    key = key_of(b"data")
    with cache.writer(key, 4) as writer:
        writer.write(b"dat")
        with pytest.raises(ValueError, match="3 bytes written, 4 declared"):
            writer.commit()
    with cache.writer(key, 4) as writer, pytest.raises(ValueError, match="more than the declared"):
        writer.write(b"data!")
    assert key not in cache
    assert tmp_files(cache) == []


def test_least_recently_used_goes_first(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, max_bytes=250)
    first = put(cache, b"a" * 100, mtime=2000)
    second = put(cache, b"b" * 100, mtime=1000)  # written later, but used longer ago
    third = put(cache, b"c" * 100)
    assert second not in cache
    assert first in cache
    assert third in cache
    assert cache.usage() == 200


def test_eviction_stops_as_soon_as_the_total_fits(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, max_bytes=300)
    old = [put(cache, bytes([n]) * 100, mtime=1000 + n) for n in range(3)]
    put(cache, b"x" * 150)
    assert [key in cache for key in old] == [False, False, True]
    assert cache.usage() == 250


def test_open_marks_a_blob_recently_used(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, max_bytes=250)
    first = put(cache, b"a" * 100, mtime=1000)
    second = put(cache, b"b" * 100, mtime=2000)
    assert read(cache, first) == b"a" * 100
    put(cache, b"c" * 100)
    assert first in cache
    assert second not in cache


def test_the_blob_just_committed_is_never_the_one_evicted(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, max_bytes=150)
    future = time.time() + 10_000  # another server's clock ahead of ours
    other = put(cache, b"a" * 100, mtime=future)
    mine = put(cache, b"b" * 100)
    assert mine in cache
    assert other not in cache


def test_a_blob_bigger_than_the_cache_is_not_kept(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, max_bytes=10)
    kept = put(cache, b"k" * 10)
    big = key_of(b"x" * 11)
    with cache.writer(big, 11) as writer:
        assert tmp_files(cache) == []  # no disk spent on it
        writer.write(b"x" * 11)
        assert writer.commit() is False
    assert big not in cache
    assert kept in cache
    assert tmp_files(cache) == []


def test_a_blob_evicted_while_open_still_reads_fully(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, max_bytes=1500)
    data = bytes(range(256)) * 4
    key = put(cache, data)
    handle = cache.open(key)
    assert handle is not None
    os.utime(cache.path_of(key), (1000, 1000))
    with handle:
        assert handle.read(10) == data[:10]
        put(cache, b"n" * 1000)
        assert key not in cache
        assert handle.read() == data[10:]


def test_two_servers_share_one_volume(tmp_path: Path) -> None:
    server_a = BlobCache(tmp_path, max_bytes=250)
    server_b = BlobCache(tmp_path, max_bytes=250)
    from_a = put(server_a, b"a" * 100)
    assert read(server_b, from_a) == b"a" * 100
    os.utime(server_a.path_of(from_a), (1000, 1000))
    put(server_b, b"b" * 100, mtime=2000)
    put(server_b, b"c" * 100)  # b's bound counts a's blob too
    assert from_a not in server_a
    assert server_a.usage() == server_b.usage() == 200


BAD_KEYS = [
    ("md5", "0" * 32),
    ("sha256", "A" * 64),
    ("sha256", "0" * 63),
    ("sha256", "0" * 64 + "\n"),
    ("sha256", "0" * 40),
    ("git-sha1", "0" * 64),
    ("git-sha1", "../" * 13 + "0"),
    ("sha256", "/etc/passwd"),
    ("sha256",),
    ["sha256", "0" * 64],
    ("sha256", b"0" * 64),
]


@pytest.mark.parametrize("key", BAD_KEYS, ids=repr)
def test_bad_keys_are_refused(tmp_path: Path, key: BlobKey) -> None:
    cache = BlobCache(tmp_path, max_bytes=1000)
    with pytest.raises(ValueError):
        cache.open(key)
    with pytest.raises(ValueError):
        cache.writer(key, 1)
    with pytest.raises(ValueError):
        _ = key in cache
    assert tmp_files(cache) == []


def test_stale_temp_files_are_removed_at_start(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    stale, fresh = tmp / "crashed.1.part", tmp / "writing.2.part"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"half")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(stale, (two_days_ago, two_days_ago))
    BlobCache(tmp_path, max_bytes=1000)
    assert not stale.exists()
    assert fresh.exists()  # another server may be writing it right now


def test_concurrent_writers_of_one_key_both_commit(tmp_path: Path) -> None:
    data = b"same bytes" * 100
    key = key_of(data)
    caches = [BlobCache(tmp_path, max_bytes=10_000) for _ in range(4)]
    written = threading.Barrier(len(caches))

    def serve(cache: BlobCache) -> bool:
        with cache.writer(key, len(data)) as writer:
            writer.write(data)
            written.wait(timeout=30)  # every temp file exists before any commit
            return writer.commit()

    with ThreadPoolExecutor(max_workers=len(caches)) as pool:
        results = list(pool.map(serve, caches))  # re-raises any writer's error
    assert results == [True] * len(caches)
    assert read(caches[0], key) == data
    assert caches[0].usage() == len(data)
    assert tmp_files(caches[0]) == []
