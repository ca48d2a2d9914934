"""MemoryBudget: big buffers are held one or two at a time, whatever the number of workers."""

from __future__ import annotations

import io
import json
import struct
import tarfile
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from app.core.limits import Limits
from app.core.membudget import SMALL_BUFFER, MemoryBudget, process_budget
from app.core.pipeline import VetOptions, vet
from app.core.scanners.binary_scanner import BinaryScanner
from app.core.scanners.safetensors_scanner import PARSED_BYTES_PER_HEADER_BYTE, SafetensorsScanner
from app.sources.local import LocalSource


def hold_concurrently(budget: MemoryBudget, sizes: list[int]) -> None:
    def one(size: int) -> None:
        with budget.reserve(size):
            time.sleep(0.02)  # long enough for the other threads to try their luck

    with ThreadPoolExecutor(max_workers=len(sizes)) as pool:
        list(pool.map(one, sizes))


def test_reservations_beyond_the_budget_wait_their_turn() -> None:
    budget = MemoryBudget(2 * SMALL_BUFFER)
    hold_concurrently(budget, [SMALL_BUFFER] * 8)
    assert budget.max_holders == 2


def test_a_reservation_larger_than_the_budget_runs_alone() -> None:
    budget = MemoryBudget(SMALL_BUFFER)
    hold_concurrently(budget, [10 * SMALL_BUFFER] * 4)
    assert budget.max_holders == 1


def test_small_buffers_are_not_serialised() -> None:
    budget = MemoryBudget(SMALL_BUFFER)
    hold_concurrently(budget, [SMALL_BUFFER - 1] * 4)
    assert budget.max_holders == 0


def test_a_nested_reservation_does_not_wait_on_its_own_thread() -> None:
    budget = MemoryBudget(SMALL_BUFFER)
    done = threading.Event()

    def nested() -> None:
        with budget.reserve(SMALL_BUFFER), budget.reserve(SMALL_BUFFER):
            done.set()

    worker = threading.Thread(target=nested)
    worker.start()
    worker.join(timeout=5)
    assert done.is_set()


def test_every_vet_in_the_process_shares_one_budget() -> None:
    assert process_budget(Limits()) is process_budget(Limits())


def big_safetensors(tensors: int) -> bytes:
    header = {f"t{i}": {"dtype": "U8", "shape": [1], "data_offsets": [i, i + 1]} for i in range(tensors)}
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + bytes(tensors)


def test_the_pipeline_parses_big_safetensors_headers_one_at_a_time(tmp_path: Path) -> None:
    data = big_safetensors(12_000)  # ~0.9 MB header: its parse reserves more than one budget
    assert len(data) * PARSED_BYTES_PER_HEADER_BYTE > SMALL_BUFFER
    for i in range(4):
        (tmp_path / f"model-{i}.safetensors").write_bytes(data)
    budget = MemoryBudget(SMALL_BUFFER)
    report = vet(LocalSource(tmp_path), [SafetensorsScanner()], options=VetOptions(workers=4, memory=budget))
    assert report.findings == ()
    assert budget.max_holders == 1


def test_nested_archives_are_inflated_one_at_a_time(tmp_path: Path) -> None:
    inner = io.BytesIO()
    with tarfile.open(fileobj=inner, mode="w") as tf:
        info = tarfile.TarInfo("notes.txt")
        info.size = 100_000
        tf.addfile(info, io.BytesIO(b"n" * info.size))
    for i in range(4):
        with zipfile.ZipFile(tmp_path / f"bundle-{i}.zip", "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("inner.tar", inner.getvalue())
    budget = MemoryBudget(SMALL_BUFFER)
    report = vet(LocalSource(tmp_path), [BinaryScanner()], options=VetOptions(workers=4, memory=budget))
    assert report.findings == ()
    assert budget.max_holders == 1
