"""The upstream's body comes out as chunks of at least 1 MiB (the last may be shorter), every byte once, in order,
from socket reads of up to 1 MiB."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpcore2

from app.sources import upstream
from app.sources.upstream import CHUNK
from tests.fakes import run_coroutine


class Reads:
    """A stand-in response whose raw body arrives in the given pieces."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


def chunks_of(pieces: list[bytes]) -> list[bytes]:
    async def run() -> list[bytes]:
        return [c async for c in upstream._chunks(Reads(pieces), "http://hub/x")]  # type: ignore[arg-type]

    return run_coroutine(run())


def test_small_reads_are_joined_into_chunks_of_at_least_a_mib() -> None:
    pieces = [bytes([i % 256]) * 200_000 for i in range(12)]  # 2.4 MB in 200 kB reads
    chunks = chunks_of(pieces)
    assert b"".join(chunks) == b"".join(pieces)
    assert [len(c) for c in chunks] == [1_200_000, 1_200_000]


def test_the_rest_comes_out_last_and_nothing_comes_out_of_nothing() -> None:
    chunks = chunks_of([b"a" * CHUNK, b"b" * 10])
    assert [len(c) for c in chunks] == [CHUNK, 10]
    assert chunks_of([]) == []


def test_the_socket_is_read_up_to_a_chunk_at_a_time() -> None:
    assert httpcore2.AsyncHTTP11Connection.READ_NUM_BYTES == CHUNK
