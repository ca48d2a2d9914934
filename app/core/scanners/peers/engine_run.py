"""One peer engine's run over one file: its findings, errors and a hit limit, ending in an outcome.

The peer libraries (picklescan, modelscan) raise many kinds of errors; everything here fails
closed: a limit or any library failure is a failed scan, never a clean one.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import IO

from app.core.findings import FindingSink, ScanOutcome, Severity, Status
from app.core.formats.blobs import BudgetBlob, open_blob
from app.core.formats.detect import Format
from app.core.limits import LimitExceeded
from app.core.scanners.base import ScanContext
from app.core.scanners.peers.shared import in_memory

Opener = Callable[[], AbstractContextManager[IO[bytes]]]


@dataclass
class EngineRun:
    """What one peer engine produced for one file: findings, errors, a hit limit."""

    sink: FindingSink
    errors: list[str] = field(default_factory=list)
    limit: str | None = None
    skipped: str | None = None  # the engine could not be run safely; the file stays unscanned

    def outcome(self) -> ScanOutcome:
        scanner, path = self.sink.scanner, self.sink.path
        if self.limit is not None:
            self.sink.add("limit-exceeded", Severity.HIGH, f"{scanner} stopped: {self.limit}")
            detail = "; ".join([self.limit, *self.errors])
            return ScanOutcome(scanner, path, Status.FAILED, tuple(self.sink.findings), detail)
        if self.errors:
            return ScanOutcome.failed(scanner, path, "; ".join(self.errors), self.sink.findings)
        if self.skipped is not None:
            return ScanOutcome(scanner, path, Status.SKIPPED, tuple(self.sink.findings), self.skipped)
        return ScanOutcome.scanned(scanner, path, self.sink.findings)


def run_engine(name: str, ctx: ScanContext, body: Callable[[BudgetBlob, EngineRun], None]) -> ScanOutcome:
    """Run ``body`` on the file's read-budgeted blob; a limit or any library failure fails closed."""
    run = EngineRun(FindingSink(ctx.file.path, name))
    try:
        body(BudgetBlob(ctx.blob, ctx.limits.max_read_bytes_per_file), run)
    except LimitExceeded as exc:
        run.limit = str(exc)
    except Exception as exc:  # noqa: BLE001 - any library failure fails closed
        run.errors.append(f"{type(exc).__name__}: {exc}")
    return run.outcome()


def peer_stream(ctx: ScanContext, budget: BudgetBlob) -> AbstractContextManager[IO[bytes]]:
    """The file as the peers read it: a plain pickle as bytes in memory (they walk all of it), the rest
    as a blob stream (archives are read member by member, a legacy checkpoint only up to its pickles)."""
    if ctx.file.format == Format.PICKLE:
        return in_memory(budget, ctx.budget())
    return open_blob(budget)


def reopen(ctx: ScanContext, stream: IO[bytes]) -> Opener:
    """A second pass over the file (for the opcode guard): the same bytes when they are in memory,
    else a separately budgeted stream, so the guard's reads never eat the engine's read budget."""
    if isinstance(stream, io.BytesIO):
        return lambda: _rewound(stream)
    return lambda: open_blob(BudgetBlob(ctx.blob, ctx.limits.max_read_bytes_per_file))


@contextmanager
def _rewound(stream: IO[bytes]) -> Iterator[IO[bytes]]:
    position = stream.tell()
    stream.seek(0)
    try:
        yield stream
    finally:
        stream.seek(position)
