"""Slow paths on hostile input: a zip of very many tiny members must cost batched reads.

Before the fix each member cost ~3 source reads in the archive walk and ~4 in the pickle
walk (one Range request each on the hub); 100,000 members took ~30 s.
"""

from __future__ import annotations

import io
import zipfile

from app.core.formats import zip_reader
from app.core.formats.blobs import BudgetBlob, BytesBlob, PrefetchBlob, SourceBlob
from app.core.pipeline import VetOptions, vet
from app.core.scanners.binary_scanner import BinaryScanner
from app.core.scanners.pickle_scanner import PickleScanner
from app.core.verdict import Verdict
from tests.fakes import MemorySource

MEMBERS = 20_000


class CountingSource(MemorySource):
    def __init__(self, files: dict[str, bytes]) -> None:
        super().__init__(files)
        self.reads = 0

    def read(self, path: str, offset: int, length: int) -> bytes:
        self.reads += 1
        return super().read(path, offset, length)


def _many_members(n: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for i in range(n):
            zf.writestr(f"m/{i}.txt", b"x")
    return buf.getvalue()


def test_a_zip_of_many_tiny_members_is_read_in_batches() -> None:
    data = _many_members(MEMBERS)
    source = CountingSource({"many.zip": data})
    report = vet(source, [BinaryScanner(), PickleScanner()], options=VetOptions(workers=1))
    assert report.findings == ()
    assert report.files[0].scanned
    assert report.decision.verdict is Verdict.APPROVE
    assert source.reads < 100  # was ~7 per member
    assert report.stats.bytes_read <= len(data)


def test_prefetch_serves_planned_spans_and_passes_the_rest_through() -> None:
    inner = CountingSource({"f": bytes(range(256)) * 64})
    blob = PrefetchBlob(SourceBlob(inner, "f"), [(100, 200), (210, 300), (9000, 9100)])
    assert blob.read(150, 20) == bytes(range(150, 170))
    assert blob.read(250, 50) == bytes(range(250, 256)) + bytes(range(44))  # same chunk: no new read
    assert inner.reads == 1
    assert blob.read(290, 20) == (bytes(range(256)) * 64)[290:310]  # runs past the plan: straight through
    assert blob.read(9050, 10) == (bytes(range(256)) * 64)[9050:9060]
    assert inner.reads == 3
    assert BytesBlob(b"abc").read(1, 5) == PrefetchBlob(BytesBlob(b"abc"), [(0, 3)]).read(1, 5)


def test_the_central_directory_is_parsed_once_per_file() -> None:
    # refine_format, the archive walk and the pickle walk each asked for it (~0.5 s per parse
    # at 100,000 entries); each scanner wraps the file's blob in its own budget.
    source = CountingSource({"many.zip": _many_members(50)})
    blob = SourceBlob(source, "many.zip")
    first, second = BudgetBlob(blob, 1 << 20), BudgetBlob(PrefetchBlob(blob, []), 1 << 20)
    assert zip_reader.read_directory(first) == zip_reader.read_directory(second)
    assert first.bytes_read > 0
    assert second.bytes_read == 0
    assert zip_reader.read_directory(BudgetBlob(SourceBlob(source, "many.zip"), 1 << 20))  # a new file: parsed
