"""Scanners import their libraries once, on the vet's own thread, before any scan thread starts (issue 22,
item 6): modelscan's circular import, raced by scan threads, made the same file's verdict vary."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import ClassVar

import pytest

from app.core.findings import ScanOutcome
from app.core.pipeline import VetOptions, vet
from app.core.scanners.base import ScanContext
from app.sources.local import LocalSource
from tests.fakes import TextScanner


class PreparingScanner(TextScanner):
    name: ClassVar[str] = "preparing"

    def __init__(self, events: list[tuple[str, int]]) -> None:
        super().__init__()
        self.events = events

    def prepare(self) -> None:
        self.events.append((f"prepare {self.name}", threading.get_ident()))

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        self.events.append((f"scan {self.name}", threading.get_ident()))
        return super().scan(ctx)


class SecondScanner(PreparingScanner):
    name: ClassVar[str] = "second"


def test_every_scanner_is_prepared_once_in_list_order_on_the_vet_thread_before_any_scan(tmp_path: Path) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text("fine")
    events: list[tuple[str, int]] = []
    vet(LocalSource(tmp_path), [PreparingScanner(events), SecondScanner(events)], options=VetOptions(workers=8))
    assert events[:2] == [("prepare preparing", threading.get_ident()), ("prepare second", threading.get_ident())]
    assert sorted(e for e, _ in events[2:]) == ["scan preparing"] * 3 + ["scan second"] * 3


def test_a_single_scan_thread_needs_no_preparing(tmp_path: Path) -> None:
    # One file or one worker: no two threads can race an import; a one-file scan keeps its start-up.
    (tmp_path / "a.txt").write_text("fine")
    events: list[tuple[str, int]] = []
    vet(LocalSource(tmp_path), [PreparingScanner(events)], options=VetOptions(workers=8))
    (tmp_path / "b.txt").write_text("fine")
    vet(LocalSource(tmp_path), [PreparingScanner(events)], options=VetOptions(workers=1))
    assert [e for e, _ in events] == ["scan preparing"] * 3


def test_modelscan_imported_through_its_peer_scanner_has_no_import_loop() -> None:
    # In a fresh interpreter: modelscan.tools.picklescanner imported first is circular in modelscan 0.8.8.
    code = ("from app.core.scanners.modelscan_scanner import _scan_pickle_bytes; "
            "assert _scan_pickle_bytes().__name__ == 'scan_pickle_bytes'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_a_peer_that_cannot_be_imported_fails_its_scans_not_the_vet(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.core.scanners import modelscan_scanner

    def broken() -> None:
        raise ImportError("cannot import modelscan.scanners")

    monkeypatch.setattr(modelscan_scanner, "load_modelscan", broken)
    scanner = modelscan_scanner.ModelscanScanner()
    scanner.prepare()  # no exception: the vet goes on
    with pytest.raises(ImportError):
        modelscan_scanner._scan_pickle_bytes()  # what a scan calls: run_engine turns it into a scan-error
