"""app.services.fanout: one upstream read per blob, followed by every client; the cache keeps only verified
blobs, and a follower's last piece waits for the verification."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from app.core.byte_ranges import ByteRange
from app.core.manifest import ManifestFile
from app.services.blob_cache import BlobCache
from app.services.fanout import Flight, Flights, follow
from app.services.verified_stream import Checked
from tests.fakes import digest_updates_on_loop, run_coroutine

DATA = bytes(range(256)) * 40_000  # ~10 MiB: several chunks
ENTRY = ManifestFile("model.safetensors", len(DATA), sha256=hashlib.sha256(DATA).hexdigest())
KEY = ("sha256", ENTRY.sha256 or "")


class Source:
    """The upstream: yields ``data`` in 1 MiB chunks, each after ``gate`` lets it (counted in ``opened``)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.opened, self.gate = data, 0, asyncio.Event()

    @asynccontextmanager
    async def open(self) -> AsyncIterator[AsyncIterator[bytes]]:
        self.opened += 1
        yield self._chunks()

    async def _chunks(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.data), 1 << 20):
            await self.gate.wait()
            yield self.data[start:start + (1 << 20)]


async def _drain(pieces: AsyncIterator[bytes]) -> bytes:
    return b"".join([piece async for piece in pieces])


def _run(cache: BlobCache, data: bytes, clients: list[ByteRange | None]) -> tuple[list[bytes], list[Checked],
                                                                                   Source, list[Flight]]:
    async def main() -> tuple[list[bytes], list[Checked], Source, list[Flight]]:
        flights, source, landed = Flights(), Source(data), []
        checks = [Checked() for _ in clients]
        joined = [flights.join(KEY, ENTRY, lambda: cache.writer(KEY, ENTRY.size), source.open, landed.append)
                  for _ in clients]
        assert all(j is not None for j in joined) and len({id(j[0]) for j in joined if j}) == 1
        readers = [asyncio.ensure_future(_drain(follow(*j, wanted, checked)))
                   for j, wanted, checked in zip(joined, clients, checks, strict=True) if j]
        source.gate.set()
        bodies = await asyncio.gather(*readers)
        return list(bodies), checks, source, landed

    return run_coroutine(main())


def test_clients_of_one_blob_share_one_upstream_read_and_the_cache_keeps_it(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, 1 << 30)
    ranges = [None, None, ByteRange(5, 1_500_000), ByteRange(len(DATA) - 10, len(DATA) - 1)]
    bodies, checks, source, landed = _run(cache, DATA, ranges)
    assert source.opened == 1
    assert bodies == [DATA, DATA, DATA[5:1_500_001], DATA[-10:]]
    assert all(c.ok for c in checks) and len(landed) == 1 and landed[0].kept
    handle = cache.open(KEY)
    assert handle is not None
    with handle:
        assert handle.read() == DATA


def test_a_mismatch_ends_every_follower_short_and_keeps_nothing(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, 1 << 30)
    tampered = DATA[:-1] + bytes([DATA[-1] ^ 1])
    bodies, checks, source, landed = _run(cache, tampered, [None, None, ByteRange(0, 9)])
    assert source.opened == 1
    assert all(len(body) < len(want) for body, want in zip(bodies, [DATA, DATA, DATA[:10]], strict=True))
    assert bodies[2] == b""  # a range within the first chunk: its only piece was held, then dropped
    assert all(c.ok is False and "sha256" in c.problem for c in checks)
    assert landed[0].ok is False and not landed[0].kept and cache.open(KEY) is None
    assert not list((tmp_path / "tmp").iterdir())


def test_a_short_upstream_is_not_kept(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, 1 << 30)
    bodies, checks, _, landed = _run(cache, DATA[:-100], [None])
    assert checks[0].ok is False and "bytes" in checks[0].problem and len(bodies[0]) < len(DATA)
    assert cache.open(KEY) is None and not landed[0].kept


def test_the_held_piece_waits_for_the_end_of_the_flight(tmp_path: Path) -> None:
    """A follower of the first byte only gets it once the whole file was read and matched."""
    cache = BlobCache(tmp_path, 1 << 30)

    async def main() -> tuple[bytes, bool]:
        flights, source = Flights(), Source(DATA)
        joined = flights.join(KEY, ENTRY, lambda: cache.writer(KEY, ENTRY.size), source.open, lambda f: None)
        assert joined is not None
        reader = asyncio.ensure_future(_drain(follow(*joined, ByteRange(0, 0), Checked())))
        await asyncio.sleep(0.05)  # the upstream sends nothing yet
        early = reader.done()
        source.gate.set()
        return await reader, early

    body, early = run_coroutine(main())
    assert body == DATA[:1] and early is False


def test_a_blob_too_big_to_keep_has_no_flight(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, 1000)

    async def main() -> object:
        return Flights().join(KEY, ENTRY, lambda: cache.writer(KEY, ENTRY.size), Source(DATA).open, lambda f: None)

    assert run_coroutine(main()) is None


def test_the_flight_hashes_and_writes_off_the_event_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on_loop = digest_updates_on_loop(monkeypatch)
    bodies, checks, _, landed = _run(BlobCache(tmp_path, 1 << 30), DATA, [None])
    assert bodies == [DATA] and checks[0].ok and landed[0].kept
    assert len(on_loop) == 10 and not any(on_loop)
