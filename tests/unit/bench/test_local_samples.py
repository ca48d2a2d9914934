"""The samples of bench/bench_local.py are what its docs say, counted without deserializing anything."""

from __future__ import annotations

import io
import json
import pickletools
import struct
import sys
import zipfile
from pathlib import Path

import pytest

from bench import local_samples as samples

ROOT = Path(__file__).resolve().parents[3]


def opcodes(stream: bytes) -> list[str]:
    return [op.name for op, _, _ in pickletools.genops(stream)]


def test_big_pickle_has_the_stated_opcodes(tmp_path: Path) -> None:
    target = samples.by_name(["big-pickle"])[0].ensure(tmp_path)
    ops = opcodes(target.read_bytes())
    assert 1_340_000 <= len(ops) <= 1_360_000  # "~1.35M opcodes"
    assert 8_000_000 <= target.stat().st_size <= 9_500_000
    assert ops.count("REDUCE") == 2 * 52_000 + 1  # per tensor: rebuild + OrderedDict hooks; the dict itself


def test_torch_zip_has_45000_members_and_a_memoized_data_pkl(tmp_path: Path) -> None:
    spec = samples.SampleSpec("torch-zip", 30, 10**6)
    samples.build_torch_zip(tmp_path, spec)
    with zipfile.ZipFile(tmp_path / "pytorch_model.bin") as archive:
        names = archive.namelist()
        data = archive.read("archive/data.pkl")
    assert len(names) == 30 + 4
    ops = opcodes(data)
    assert ops.count("GLOBAL") == 3 and ops.count("BINPUT") == 3
    # 30 uses of each global, +1 OrderedDict for the state dict itself; the first use of each is the GLOBAL
    assert ops.count("BINGET") == 3 * 30 + 1 - 3
    pickletools.dis(data, out=io.StringIO())  # raises if a BINGET names a memo slot never stored
    default = samples.by_name(["torch-zip"])[0].spec
    assert default.count + 4 == 45_000


def test_memoize_globals_keeps_everything_but_the_repeats() -> None:
    tensors = samples.expert_tensors(5, 10**5)
    plain = samples.state_dict_pickle(tensors)
    memoized = samples.memoize_globals(plain)
    assert len(opcodes(memoized)) == len(opcodes(plain)) + 3  # one BINPUT per memoized global
    assert len(memoized) < len(plain)
    assert [op for op in opcodes(plain) if op not in ("GLOBAL",)] == [
        op for op in opcodes(memoized) if op not in ("GLOBAL", "BINGET", "BINPUT")
    ]


def test_text_repo_has_2000_text_files_of_five_kinds(tmp_path: Path) -> None:
    target = samples.by_name(["text-repo"])[0].ensure(tmp_path)
    files = [p for p in target.rglob("*") if p.is_file()]
    assert len(files) == 2_000
    assert {p.suffix for p in files} == {".json", ".md", ".py"}
    assert len({p.parent for p in files}) == 2_000 // samples.TEXT_FILES_PER_MODEL


def test_safetensors_shard_is_2_gb_and_sparse(tmp_path: Path) -> None:
    target = samples.by_name(["safetensors"])[0].ensure(tmp_path)
    with target.open("rb") as fh:
        (length,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(length))
    end = max(t["data_offsets"][1] for k, t in header.items() if k != "__metadata__")
    assert target.stat().st_size == 8 + length + end
    assert 1.9e9 < target.stat().st_size < 2.1e9
    assert target.stat().st_blocks * 512 < 10**6  # the data is a hole


def test_joblib_sample_writes_every_array_inline(tmp_path: Path) -> None:
    spec = samples.SampleSpec("joblib", 2, 2 * 256 * 8 * 10)
    samples.build_joblib(tmp_path, spec)
    data = (tmp_path / "model.joblib").read_bytes()
    arrays = samples.joblib_arrays(spec.count, spec.total_bytes)
    for array in arrays.values():
        assert array.tobytes("C") in data
    assert b"joblib.numpy_pickle" in data and b"NumpyArrayWrapper" in data


def test_a_changed_spec_rebuilds_the_sample(tmp_path: Path) -> None:
    tiny = samples.by_name(["tiny-pickle"])[0]
    target = tiny.ensure(tmp_path)
    first = target.stat().st_mtime_ns
    assert tiny.ensure(tmp_path).stat().st_mtime_ns == first  # reused
    bumped = samples.Sample(tiny.name, tiny.description, samples.SampleSpec("tiny-pickle", 3, 0, bump=99),
                            tiny.target_rel, tiny.build)
    bumped.ensure(tmp_path)
    stamp = json.loads((tmp_path / "tiny-pickle.spec.json").read_text())
    assert stamp["bump"] == 99


def test_unknown_sample_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown samples"):
        samples.by_name(["big-pickle", "nope"])


def test_run_child_reports_exit_code_cpu_and_peak_rss(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import bench_local

    burn = "import sys; b = bytearray(64 * 2**20); sum(range(3 * 10**6)); sys.exit(7)"
    code, wall, cpu, rss_kb, out, err = bench_local.run_child([sys.executable, "-c", burn], {}, ROOT)
    assert code == 7 and out == "" and err == ""
    assert 0 < cpu <= wall + 0.05
    assert rss_kb > 64 * 1024  # the 64 MiB buffer is in the peak
