"""With the blob cache on: one upstream read per blob, however many clients ask for it at once.

The first request for a blob the cache lacks starts a ``Flight``: a task, tied to no client, that streams
the file from the upstream into the cache's temp file, hashing it (``Digest``), and commits it once it
matched the manifest. Every client of that blob, the first included, follows the temp file as it grows,
holding back its last piece until the flight verified, as a direct stream does (app.services.verified_stream).
An 8-node deploy that starts at once pulls a 400 GB checkpoint from the upstream once; a client that leaves
does not stop the flight, so the cache is filled for the next one. Flights are per server process: replicas
sharing a cache volume each fly their own.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path

from anyio import to_thread

from app.core.byte_ranges import ByteRange
from app.core.manifest import ManifestFile
from app.services.blob_cache import BlobKey, BlobWriter
from app.services.verified_stream import Checked, Digest, mismatch, too_long
from app.sources.hub_errors import HubError

CHUNK = 1 << 20
Source = Callable[[], AbstractAsyncContextManager[AsyncIterator[bytes]]]  # opens the upstream stream
Landed = Callable[["Flight"], None]  # told once a flight ended (the endpoint's metrics and log)


@dataclass
class Flight:
    """One upstream read of ``entry`` into ``path`` (the cache's temp file), as far as it got."""

    entry: ManifestFile
    path: Path
    final: Path  # where the blob lands once verified (the temp file is renamed there)
    written: int = 0  # bytes in ``path`` so far
    ok: bool | None = None  # None while flying; then whether every byte matched the manifest
    problem: str = ""
    failed_upstream: bool = False  # the upstream broke off or refused (not a mismatch)
    kept: bool = False  # the verified blob is in the cache (not when too big, or the disk failed)
    _moved: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def moved(self) -> None:
        async with self._moved:
            self._moved.notify_all()

    async def past(self, offset: int) -> None:
        """Until more than ``offset`` bytes are written, or the flight ended."""
        async with self._moved:
            await self._moved.wait_for(lambda: self.written > offset or self.ok is not None)

    async def landed(self) -> None:
        async with self._moved:
            await self._moved.wait_for(lambda: self.ok is not None)


class Flights:
    """The flights of one server, by blob."""

    def __init__(self) -> None:
        self._active: dict[BlobKey, Flight] = {}
        self._tasks: set[asyncio.Task[None]] = set()  # referenced until done (the loop keeps weak ones)

    def join(self, key: BlobKey, entry: ManifestFile, writer: Callable[[], BlobWriter], source: Source,
             landed: Landed) -> tuple[Flight, int] | None:
        """The flight of ``key`` (started if none is under way) and a descriptor of its file for ``follow``;
        None when the blob is too big to keep (no file to follow: the caller streams on its own).

        The file is opened here, before the caller awaits anything, and an open descriptor outlives a
        rename or a removal. A flight committing now may have renamed its file already: then the blob is
        opened where it landed; one that failed has left the table before it removed its file."""
        flight = self._active.get(key)
        if flight is None:
            spool = writer()
            if spool.path is None:
                spool.abort()
                return None
            flight = self._active[key] = Flight(entry, spool.path, spool.final)
            task = asyncio.get_running_loop().create_task(self._fly(key, flight, spool, source, landed))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        for path in (flight.path, flight.final):
            try:
                return flight, os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue
        return None  # the cache's disk failed under the commit: the caller streams on its own

    def __len__(self) -> int:
        return len(self._active)

    async def _fly(self, key: BlobKey, flight: Flight, spool: BlobWriter, source: Source, landed: Landed) -> None:
        flight.problem = "the upstream read did not finish"  # until _fill says otherwise: nothing unchecked is kept
        try:
            flight.problem = await _fill(flight, spool, source)
        except (HubError, OSError) as exc:  # the upstream broke off or refused, or the disk failed
            flight.problem, flight.failed_upstream = f"{type(exc).__name__}: {exc}", True
        finally:
            if flight.problem:
                del self._active[key]  # first: a request from now on flies again, never joins a removed file
            await _settle(flight, spool)
            self._active.pop(key, None)  # committed: a request from now on finds the blob in the cache
            landed(flight)


async def _fill(flight: Flight, spool: BlobWriter, source: Source) -> str:
    """Stream the upstream into ``spool``; why it is not the manifest's file ("" when it is)."""
    entry, digest = flight.entry, Digest(flight.entry)
    async with source() as chunks:
        async for chunk in chunks:
            if flight.written + len(chunk) > entry.size:
                return too_long(entry)
            await to_thread.run_sync(_absorb, digest, spool, chunk)  # hashlib and the write release the GIL
            flight.written += len(chunk)
            await flight.moved()
    return mismatch(entry, digest, flight.written)


def _absorb(digest: Digest, spool: BlobWriter, chunk: bytes) -> None:
    """On a worker thread: the event loop moves the followers' bytes meanwhile."""
    digest.update(chunk)
    spool.write(chunk)


async def _settle(flight: Flight, spool: BlobWriter) -> None:
    if flight.problem:
        spool.abort()
    else:
        try:
            flight.kept = await to_thread.run_sync(spool.commit)  # fsync and rename: off the event loop
        except OSError:  # the disk failed: nothing kept, but what the followers read did verify
            spool.abort()
    flight.ok = not flight.problem
    await flight.moved()


async def follow(flight: Flight, fd: int, wanted: ByteRange | None,
                 checked: Checked) -> AsyncGenerator[bytes, None]:
    """The bytes of ``wanted`` from the flight's file (``fd``, from ``join``; closed here) as it grows; the
    last piece only once the flight verified."""
    start, end = (0, flight.entry.size) if wanted is None else (wanted.start, wanted.end + 1)
    try:
        position, held = start, b""
        while position < end:
            await flight.past(position)
            if flight.written <= position:
                break  # the flight ended before reaching here
            piece = await to_thread.run_sync(os.pread, fd, min(CHUNK, flight.written - position, end - position),
                                             position)
            if held:
                yield held
                checked.sent += len(held)
            position, held = position + len(piece), piece
        await flight.landed()
        checked.ok, checked.problem = flight.ok is True and position == end, flight.problem
        if checked.ok and held:
            yield held
            checked.sent += len(held)
    finally:
        os.close(fd)
