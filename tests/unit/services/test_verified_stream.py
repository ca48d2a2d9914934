"""verified(): a file's bytes checked in flight against the manifest, the last piece held until they match."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import cast

import pytest

from app.core.byte_ranges import ByteRange
from app.core.manifest import ManifestFile
from app.services.verified_stream import Checked, verifiable, verified
from tests.fakes import digest_updates_on_loop, run_coroutine

DATA = bytes(range(26)) * 3  # 78 bytes
CHUNK = 8


def lfs_entry(data: bytes = DATA) -> ManifestFile:
    return ManifestFile("model.safetensors", len(data), sha256=hashlib.sha256(data).hexdigest())


def git_entry(data: bytes = DATA) -> ManifestFile:
    blob_id = hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
    return ManifestFile("config.json", len(data), blob_id=blob_id)


@dataclass
class Source:
    """Chunks handed out one at a time; ``taken`` counts them."""

    chunks: list[bytes]
    taken: int = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.taken += 1
            yield chunk


def chunked(data: bytes, size: int = CHUNK) -> Source:
    return Source([data[i:i + size] for i in range(0, len(data), size)])


def run(source: Source, entry: ManifestFile, wanted: ByteRange | None = None) -> tuple[bytes, Checked]:
    checked = Checked()

    async def collect() -> bytes:
        return b"".join([piece async for piece in verified(aiter(source), entry, wanted, checked)])

    return run_coroutine(collect()), checked


def tampered(data: bytes = DATA) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 0xFF])


@pytest.mark.parametrize("entry", [lfs_entry(), git_entry()], ids=["sha256", "git-blob-id"])
def test_the_whole_file_passes_unchanged(entry: ManifestFile) -> None:
    body, checked = run(chunked(DATA), entry)
    assert body == DATA
    assert (checked.ok, checked.sent, checked.read, checked.problem) == (True, len(DATA), len(DATA), "")


@pytest.mark.parametrize(("start", "end"), [(0, 0), (0, 7), (7, 8), (3, 20), (8, 15), (15, 64), (70, 77), (77, 77),
                                            (0, 77)])
def test_a_range_is_exact_across_chunk_boundaries(start: int, end: int) -> None:
    source = chunked(DATA)
    body, checked = run(source, lfs_entry(), ByteRange(start, end))
    assert body == DATA[start:end + 1]
    assert checked.ok is True
    assert checked.read == len(DATA)  # the whole file was read and hashed, whatever the range
    assert source.taken == len(source.chunks)


def test_the_last_piece_waits_until_the_source_is_exhausted_and_matched() -> None:
    source = chunked(DATA, 26)  # three chunks
    checked = Checked()

    async def steps() -> None:
        stream = verified(aiter(source), lfs_entry(), None, checked)
        assert await anext(stream) == DATA[:26]  # held until the second chunk arrived
        assert source.taken == 2
        assert await anext(stream) == DATA[26:52]
        assert source.taken == 3  # every chunk of the source is in...
        assert checked.ok is None  # ...but not yet checked, and the third chunk not yet sent
        assert checked.read == len(DATA)
        assert await anext(stream) == DATA[52:]
        assert checked.ok is True
        with pytest.raises(StopAsyncIteration):
            await anext(stream)

    run_coroutine(steps())


def test_a_range_inside_one_chunk_is_held_to_the_end() -> None:
    source = chunked(DATA, 26)
    checked = Checked()

    async def steps() -> None:
        stream = verified(aiter(source), lfs_entry(), ByteRange(2, 5), checked)
        assert await anext(stream) == DATA[2:6]  # only once the third chunk was read and the hash matched
        assert source.taken == 3
        assert checked.ok is True

    run_coroutine(steps())


@pytest.mark.parametrize("entry_of", [lfs_entry, git_entry], ids=["sha256", "git-blob-id"])
def test_a_mismatch_ends_the_body_short(entry_of: Callable[[bytes], ManifestFile]) -> None:
    body, checked = run(chunked(tampered()), entry_of(DATA))
    assert body == DATA[:len(DATA) - len(DATA) % CHUNK]  # all but the last piece
    assert len(body) < len(DATA)
    assert checked.ok is False
    assert "is not the approved" in checked.problem


def test_a_mismatch_inside_a_range_sends_none_of_its_last_piece() -> None:
    body, checked = run(chunked(tampered()), lfs_entry(), ByteRange(0, 9))
    assert body == DATA[:8]  # fewer bytes than asked: the piece of the second chunk never goes out
    assert checked.ok is False


def test_a_short_source_is_a_mismatch() -> None:
    body, checked = run(chunked(DATA[:-5]), lfs_entry())
    assert len(body) < len(DATA) - 5
    assert checked.ok is False
    assert f"the approved manifest says {len(DATA)}" in checked.problem


def test_too_many_bytes_stop_the_stream_early() -> None:
    source = Source([DATA[:40], DATA[40:] + b"extra", b"never read", b"nor this"])
    body, checked = run(source, lfs_entry())
    assert body == b""  # the first chunk was held, the second overflowed: nothing verified went out
    assert checked.ok is False
    assert "more than the approved" in checked.problem
    assert source.taken == 2


def test_a_client_that_leaves_leaves_the_stream_undecided() -> None:
    checked = Checked()

    async def leave_early() -> None:
        stream = verified(aiter(chunked(DATA)), lfs_entry(), None, checked)
        await anext(stream)
        await cast(AsyncGenerator[bytes, None], stream).aclose()

    run_coroutine(leave_early())
    assert checked.ok is None and checked.read < len(DATA)


def test_an_empty_file_is_verified() -> None:
    body, checked = run(Source([]), lfs_entry(b""))
    assert (body, checked.ok) == (b"", True)


def test_only_an_entry_with_a_hash_is_verifiable() -> None:
    assert verifiable(lfs_entry()) and verifiable(git_entry())
    assert not verifiable(ManifestFile("README.md", 3))


def test_large_chunks_are_hashed_off_the_event_loop_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"".join(bytes([i]) * (1 << 20) for i in range(3))  # 3 MiB in 1 MiB chunks, each different
    on_loop = digest_updates_on_loop(monkeypatch)
    body, checked = run(chunked(data, 1 << 20), lfs_entry(data))
    assert body == data and checked.ok is True  # the hash matched: the chunks went in, in order
    assert len(on_loop) == 3 and not any(on_loop)
    tampered_body, tampered_check = run(chunked(tampered(data), 1 << 20), lfs_entry(data))
    assert tampered_check.ok is False and len(tampered_body) == 2 << 20


def test_small_chunks_are_hashed_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    on_loop = digest_updates_on_loop(monkeypatch)
    run(chunked(DATA), lfs_entry())
    assert on_loop and all(on_loop)
