"""Progress for long vets and downloads: a rich bar on a terminal, nothing when output is piped."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from app.cli.console import console
from app.core.ports import ProgressFn
from app.core.report import FileReport

if TYPE_CHECKING:  # a type only: importing downloads would load the gate and the store
    from app.services.downloads import FileDoneFn


@contextmanager
def vet_progress(total_files: int, label: str, *, enabled: bool | None = None) -> Iterator[ProgressFn | None]:
    """Yield a pipeline progress callback, or None when stderr is not a terminal."""
    err = console(stderr=True)
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield None
        return
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files · {task.fields[read]} read · {task.fields[last]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(label, total=total_files, read="0 B", last="")

        def update(file: FileReport, bytes_read: int) -> None:
            bar.update(task, advance=1, read=human_bytes(bytes_read), last=file.path[-40:])

        yield update


@contextmanager
def download_progress(total_bytes: int, label: str, *, enabled: bool | None = None) -> Iterator[FileDoneFn | None]:
    """Yield a per-file callback advancing a byte bar, or None when stderr is not a terminal."""
    if not (sys.stderr.isatty() if enabled is None else enabled):
        yield None
        return
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TextColumn("{task.fields[last]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total_bytes, last="")

        def update(path: str, size: int) -> None:
            bar.update(task, advance=size, last=f"verified {path[-40:]}")

        yield update


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
