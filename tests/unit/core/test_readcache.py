import random

from app.core.manifest import Manifest, ManifestFile, RepoIdentity
from app.core.readcache import CachingSource


class CountingSource:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.calls: list[tuple[int, int]] = []
        self.bytes_read = 0

    def manifest(self) -> Manifest:
        return Manifest(RepoIdentity(None), (ManifestFile("f", len(self.data)),))

    def size(self, path: str) -> int:
        return len(self.data)

    def read(self, path: str, offset: int, length: int) -> bytes:
        self.calls.append((offset, length))
        out = self.data[offset : offset + length]
        self.bytes_read += len(out)
        return out


def test_overlapping_reads_fetch_each_byte_once() -> None:
    inner = CountingSource(bytes(range(256)) * 4)
    cache = CachingSource(inner)
    assert cache.read("f", 10, 20) == inner.data[10:30]
    assert cache.read("f", 0, 50) == inner.data[0:50]
    assert inner.calls == [(10, 20), (0, 10), (30, 20)]
    assert cache.read("f", 5, 40) == inner.data[5:45]
    assert inner.bytes_read == 50


def test_reads_past_end_of_file_are_short() -> None:
    inner = CountingSource(b"abcdef")
    cache = CachingSource(inner)
    assert cache.read("f", 4, 10) == b"ef"
    assert cache.read("f", 0, 100) == b"abcdef"


def test_random_reads_always_return_the_true_bytes() -> None:
    rng = random.Random(7)
    inner = CountingSource(rng.randbytes(5000))
    cache = CachingSource(inner)
    for _ in range(300):
        offset, length = rng.randrange(0, 5200), rng.randrange(0, 700)
        assert cache.read("f", offset, length) == inner.data[offset : offset + length]
    assert inner.bytes_read <= 5000


def test_forget_drops_the_cache() -> None:
    inner = CountingSource(b"x" * 100)
    cache = CachingSource(inner)
    cache.read("f", 0, 100)
    cache.forget("f")
    cache.read("f", 0, 100)
    assert inner.bytes_read == 200


def test_forget_returns_the_bytes_fetched_for_that_file_once_each() -> None:
    inner = CountingSource(bytes(range(256)))
    cache = CachingSource(inner)
    cache.read("f", 0, 100)
    cache.read("f", 50, 100)  # only 100..150 is new
    assert cache.forget("f") == 150
    assert cache.forget("f") == 0  # counted once: a second forget has nothing left
