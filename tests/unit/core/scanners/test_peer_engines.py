"""What the corroborating engines (picklescan, modelscan) and the Keras scanner share:
bounded reads on huge files, limits that fail closed, skips that are never clean."""

from __future__ import annotations

import pickle
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.limits import Limits
from app.core.pipeline import vet
from app.core.scanners.base import Scanner
from app.core.scanners.keras_scanner import KerasScanner
from app.core.scanners.modelscan_scanner import ModelscanScanner
from app.core.scanners.picklescan_scanner import PicklescanScanner
from app.core.verdict import Verdict
from app.sources.local import LocalSource
from tests.unit.core.scanners import peer_samples as s

PEERS = [PicklescanScanner, ModelscanScanner]


@pytest.mark.parametrize("engine", PEERS)
def test_joblib_arrays_stop_the_engine_without_failing_the_file(tmp_path: Path, engine: type[Scanner]) -> None:
    (tmp_path / "model.joblib").write_bytes(s.joblib_with_array())
    report = s.vet_with(engine(), tmp_path)
    assert f"{engine.name}:joblib-partial" in [f.rule for f in report.findings]
    assert all(f.severity is Severity.INFO for f in report.findings) and report.files[0].scanned


@pytest.mark.parametrize("engine", PEERS)
def test_too_many_opcodes_is_a_limit_not_a_memory_blowup(tmp_path: Path, engine: type[Scanner]) -> None:
    (tmp_path / "many.pkl").write_bytes(pickle.dumps(list(range(3000)), protocol=2))
    report = s.vet_with(engine(), tmp_path, Limits(max_pickle_opcodes=1000))
    assert [f.rule for f in report.findings] == ["limit-exceeded"]
    assert not report.files[0].scanned


@pytest.mark.parametrize("engine", PEERS)
def test_a_gigabyte_numeric_npy_is_vetted_from_its_header(tmp_path: Path, engine: type[Scanner]) -> None:
    s.sparse_npy(tmp_path / "big.npy", 256 * 1024 * 1024)
    source = LocalSource(tmp_path)
    report = vet(source, [engine()])
    assert report.files[0].scanned and report.findings == ()
    assert source.bytes_read < report.stats.repo_bytes // 100


@pytest.fixture(scope="module")
def sparse_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("sparse")
    s.sparse_torch_zip(folder / "pytorch_model.bin", 1536 * 1024 * 1024)
    yield folder


@pytest.mark.parametrize("engine", PEERS)
def test_a_sparse_gigabyte_checkpoint_is_vetted_by_reading_a_sliver(
    sparse_checkpoint: Path, engine: type[Scanner]
) -> None:
    source = LocalSource(sparse_checkpoint)
    report = vet(source, [engine()])
    size = report.stats.repo_bytes
    assert size > 1024**3
    assert report.files[0].format == "pytorch-zip" and report.files[0].scanned
    assert report.findings == ()
    assert source.bytes_read < size // 100, source.bytes_read


@pytest.mark.parametrize("engine", [KerasScanner, ModelscanScanner])
def test_h5_without_h5py_is_skipped_not_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: type[Scanner]
) -> None:
    (tmp_path / "model.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(64))
    monkeypatch.setitem(sys.modules, "h5py", None)  # find_spec("h5py") is now None
    report = s.vet_with(engine(), tmp_path)
    assert not report.files[0].scanned and report.verdict is Verdict.REVIEW
