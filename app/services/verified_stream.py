"""Bytes of an approved file, checked in flight against the approved manifest before the last of them goes out.

The whole file is always read and hashed (sha256 for an LFS file, else the git blob id), whatever range the
client asked for; the bytes in the range are passed on as they come, except the last piece, which is held
back until the hash and the size match. On a mismatch the body ends short and cleanly: huggingface_hub
then raises "Consistency check failed" and deletes its temporary file (it resumes only after a broken
connection, so a clean end leaves nothing to splice later bytes onto). Memory stays about two chunks per
stream; large chunks are hashed on a worker thread, off the event loop.
With the blob cache on, app.services.fanout reads the upstream once into the cache and checks it with
the same ``Digest``; this module streams when there is no cache.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from app.core.byte_ranges import ByteRange
from app.core.manifest import ManifestFile

THREAD_MIN_BYTES = 64 * 1024  # smaller chunks are hashed on the event loop


@dataclass
class Checked:
    """How one stream ended: filled in as it runs, read by the endpoint once it is over."""

    sent: int = 0  # bytes of the range passed on
    read: int = 0  # bytes of the file read from the source
    ok: bool | None = None  # None: the stream did not reach the end (the client left, the source failed)
    problem: str = ""


class Digest:
    """The hash the manifest names for ``entry``: its LFS sha256, else its git blob id."""

    def __init__(self, entry: ManifestFile) -> None:
        self.kind = "sha256" if entry.sha256 else "git blob id"
        self.expected = (entry.sha256 or entry.blob_id or "").lower()
        self._hash = hashlib.sha256() if entry.sha256 else hashlib.sha1(usedforsecurity=False)
        if not entry.sha256:
            self._hash.update(f"blob {entry.size}\0".encode())

    def update(self, chunk: bytes) -> None:
        self._hash.update(chunk)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def verifiable(entry: ManifestFile) -> bool:
    """The manifest names a hash to check ``entry`` against (a file without one is never served)."""
    return bool(entry.sha256 or entry.blob_id)


async def verified(source: AsyncIterator[bytes], entry: ManifestFile, wanted: ByteRange | None,
                   checked: Checked) -> AsyncIterator[bytes]:
    """The bytes of ``wanted`` (None: all) of ``source``, the last piece only once all of ``entry`` matched."""
    start, end = (0, entry.size) if wanted is None else (wanted.start, wanted.end + 1)
    hashing, held = Hashing(Digest(entry)), b""
    async for chunk in source:
        if checked.read + len(chunk) > entry.size:
            checked.problem = too_long(entry)
            break
        offset, checked.read = checked.read, checked.read + len(chunk)
        await hashing.take(chunk)
        piece = chunk[max(start - offset, 0):max(min(end - offset, len(chunk)), 0)]
        if piece:
            if held:
                yield held
                checked.sent += len(held)
            held = piece
    else:
        await hashing.drain()
        checked.problem = mismatch(entry, hashing.digest, checked.read)
    checked.ok = not checked.problem
    if checked.ok and held:
        yield held
        checked.sent += len(held)


class Hashing:
    """Hashes each large chunk on a worker thread while the event loop moves the next one: hashlib releases
    the GIL, so a stream's sha256 (~0.7 CPU s per GB) costs the loop nothing and several streams hash on several
    cores. One chunk at a time, in order; small chunks are hashed in place (a thread hand-off costs more)."""

    def __init__(self, digest: Digest) -> None:
        self.digest = digest
        self._pending: asyncio.Future[None] | None = None

    async def take(self, chunk: bytes) -> None:
        """Wait for the previous chunk's hash, then start this one's."""
        await self.drain()
        if len(chunk) < THREAD_MIN_BYTES:
            self.digest.update(chunk)
        else:
            self._pending = asyncio.get_running_loop().run_in_executor(None, self.digest.update, chunk)

    async def drain(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            await pending


def too_long(entry: ManifestFile) -> str:
    return f"the upstream sent more than the approved {entry.size} bytes"


def mismatch(entry: ManifestFile, digest: Digest, read: int) -> str:
    """Why what was read is not ``entry`` ("" when it is)."""
    if read != entry.size:
        return f"the upstream sent {read} bytes, the approved manifest says {entry.size}"
    actual = digest.hexdigest()
    return "" if actual == digest.expected else f"{digest.kind} {actual} is not the approved {digest.expected}"
