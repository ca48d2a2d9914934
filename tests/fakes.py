"""Shared fakes built on the real interfaces: an in-memory Source, small scanners, a stream counting what
is read, a counting hub resolver and a clock a test moves by hand."""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, TypeVar

import httpx2
import pytest

from app.core.findings import Finding, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.manifest import Manifest, ManifestFile, RepoIdentity
from app.core.ports import SourceError
from app.core.scanners.base import ScanContext
from app.errors import HfvetError

T = TypeVar("T")


class MemorySource:
    """A Source over a dict of path -> bytes, counting what is read."""

    def __init__(
        self,
        files: dict[str, bytes],
        repo_id: str | None = "org/name",
        revision: str | None = None,
        facts: dict[str, object] | None = None,
    ) -> None:
        self._files = dict(files)
        identity = RepoIdentity(repo_id, revision, dict(facts or {}))
        self._manifest = Manifest(identity, tuple(ManifestFile(p, len(b)) for p, b in sorted(files.items())))
        self._read = 0

    def manifest(self) -> Manifest:
        return self._manifest

    def size(self, path: str) -> int:
        try:
            return len(self._files[path])
        except KeyError:
            raise SourceError(f"unknown file {path!r}") from None

    def read(self, path: str, offset: int, length: int) -> bytes:
        data = self._files[path][offset : offset + max(0, length)]
        self._read += len(data)
        return data

    @property
    def bytes_read(self) -> int:
        return self._read


class TextScanner:
    """Flags the word EVIL with a chosen severity; reads the whole (small) file."""

    name: ClassVar[str] = "fake-text"
    rules: ClassVar[tuple[RuleInfo, ...]] = (RuleInfo("evil", Severity.HIGH, "says EVIL", RuleKind.EXECUTION),)

    def __init__(self, severity: Severity = Severity.HIGH) -> None:
        self.severity = severity

    def handles(self, file: ManifestFile) -> bool:
        return file.format == "text"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        data = ctx.blob.read(0, ctx.blob.size)
        found = [Finding(ctx.file.path, self.name, "evil", self.severity, "EVIL")] if b"EVIL" in data else []
        return ScanOutcome.scanned(self.name, ctx.file.path, found)

    def version(self) -> str:
        return "1"


class CrashingScanner(TextScanner):
    name: ClassVar[str] = "crashing"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        raise RuntimeError("boom")


class CountingResolver:
    """A hub resolver, ``(repo, revision) -> sha``, counting its calls (thread-safe). It answers ``sha``, or by
    default the call's number as a sha (so a test sees which call answered); ``fail`` makes it refuse, and
    ``gate`` holds every call until it is set (for at most 10 s, so a test that forgets cannot hang)."""

    def __init__(self, sha: str | None = None) -> None:
        self.calls = 0
        self.fail = False
        self.gate = threading.Event()
        self.gate.set()
        self._sha = sha
        self._lock = threading.Lock()

    def __call__(self, repo: str, revision: str) -> str:
        with self._lock:
            self.calls += 1
            number = self.calls
        self.gate.wait(10)
        if self.fail:
            raise HfvetError(f"{repo}@{revision}: no such repo")
        return self._sha or f"{number:040x}"


class FakeClock:
    """A clock (seconds) that moves only when a test sets or adds to ``now``."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class CountingStream(io.BytesIO):
    """Counts the bytes actually read (skips must seek, not read)."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.consumed = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.consumed += len(data)
        return data

    def readline(self, size: int | None = -1) -> bytes:
        data = super().readline(size)
        self.consumed += len(data)
        return data


def count_hub_sends(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs the hub wire sends, appended as they go (every attempt, retries included); sends still happen."""
    from app.sources import hub_wire

    sent: list[str] = []
    real_send = hub_wire.Wire._send

    def counted(self: hub_wire.Wire, url: str, *args: object) -> httpx2.Response:
        sent.append(url)
        return real_send(self, url, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(hub_wire.Wire, "_send", counted)
    return sent


def run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)`` on a thread of its own: an xdist worker that ran the browser tests has Playwright's
    event loop running on its main thread, where asyncio.run refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def running_loop() -> bool:
    """Whether this thread runs an event loop now (a step of a coroutine, not a worker thread's call)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def digest_updates_on_loop(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """A list that each hash update of a verified stream appends to: True when it ran on the event loop's
    thread, False on a worker thread (app.services.verified_stream.Digest)."""
    from app.services import verified_stream

    on_loop: list[bool] = []
    real_update = verified_stream.Digest.update

    def update(self: verified_stream.Digest, chunk: bytes) -> None:
        on_loop.append(running_loop())
        real_update(self, chunk)

    monkeypatch.setattr(verified_stream.Digest, "update", update)
    return on_loop
