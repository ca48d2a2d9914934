"""bench/hub_endpoint.py's pieces: the generated safetensors file is well formed and its declared sha256 is its
own, a generated repo is reused while its spec matches, sizes parse, ratios are taken against the direct path
and failed runs are left out of the medians."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import endpoint_fixture  # bench/ is a script folder, put on the path above
import hub_endpoint
from endpoint_fixture import MIB, RssSampler, build_repo, parse_size, write_safetensors


def header_of(path: Path) -> tuple[int, dict[str, dict[str, object]]]:
    raw = path.read_bytes()
    length = int.from_bytes(raw[:8], "little")
    return length, json.loads(raw[8:8 + length])


def test_the_file_is_safetensors_whose_tensors_cover_the_data(tmp_path: Path) -> None:
    target = tmp_path / "model.safetensors"
    data_bytes = 4 * MIB
    sha256 = write_safetensors(target, data_bytes)
    length, header = header_of(target)
    assert length % 8 == 0
    assert target.stat().st_size == 8 + length + data_bytes
    ends = sorted(t["data_offsets"][1] for name, t in header.items() if name != "__metadata__")  # type: ignore[index]
    assert ends[-1] == data_bytes
    assert sha256 == hashlib.sha256(target.read_bytes()).hexdigest()


def test_tensors_split_at_64_mib_and_cover_every_byte() -> None:
    specs = endpoint_fixture.tensors(130 * MIB)
    assert [t.nbytes for t in specs] == [64 * MIB, 64 * MIB, 2 * MIB]


def test_the_data_is_deterministic_and_no_two_mib_are_alike(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert write_safetensors(first, 3 * MIB) == write_safetensors(second, 3 * MIB)
    data = first.read_bytes()[-3 * MIB:]
    blocks = {data[i:i + MIB] for i in range(0, 3 * MIB, MIB)}
    assert len(blocks) == 3  # a counter in each MiB: no block repeats verbatim


def test_a_repo_is_reused_while_its_spec_matches(tmp_path: Path) -> None:
    repo = build_repo(tmp_path, 2 * MIB)
    target = tmp_path / "nvidia" / "Bench-Endpoint-2m" / "model.safetensors"
    declared = json.loads((target.parent / ".hub.json").read_text())["sha256"]["model.safetensors"]
    assert repo.repo == "nvidia/Bench-Endpoint-2m" and declared == repo.sha256
    os.utime(target, ns=(1, 1))
    assert build_repo(tmp_path, 2 * MIB) == repo
    assert target.stat().st_mtime_ns == 1  # not written again
    with target.open("ab") as out:
        out.write(b"x")  # the size no longer matches the spec: regenerated
    assert build_repo(tmp_path, 2 * MIB) == repo and target.stat().st_mtime_ns != 1


@pytest.mark.parametrize(("text", "expected"), [("512MiB", 512 * MIB), ("2GiB", 2048 * MIB), ("1.5g", 1536 * MIB),
                                                  ("64m", 64 * MIB), (str(MIB), MIB)])
def test_sizes(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["1000", "0MiB", "big", "-2GiB"])
def test_sizes_that_are_not_whole_mib_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="MiB"):
        parse_size(text)


def run(path: str, client: str, seconds: float, ok: bool = True) -> hub_endpoint.Run:
    return hub_endpoint.Run(path, client, seconds, 1_000_000_000, ok, "" if ok else "cut", {"hub": 0.5, "hfvet": 2.0})


def test_medians_leave_failed_runs_out_and_ratios_are_to_direct() -> None:
    runs = [run("direct", "raw GET", 2.0), run("direct", "raw GET", 4.0), run("upstream", "raw GET", 4.0),
            run("upstream", "raw GET", 0.1, ok=False)]
    medians = hub_endpoint.summary(runs)["raw GET"]
    assert medians["direct"]["mb_per_s"] == pytest.approx(375.0)  # median of 500 and 250
    assert medians["upstream"]["mb_per_s"] == pytest.approx(250.0)  # the failed 0.1 s run is not a result
    assert medians["upstream"]["hfvet_cpu_s_per_gb"] == pytest.approx(2.0)
    assert medians["cache hit"]["mb_per_s"] is None
    rows = hub_endpoint.throughput_table(runs).splitlines()
    upstream = next(r for r in rows if r.startswith("| raw GET | upstream"))
    assert "| 1/2 | 250 | 250, FAILED | 67% |" in upstream


def test_the_rss_sampler_keeps_a_peak_that_is_gone_by_the_end() -> None:
    sampler = RssSampler(os.getpid())
    base = sampler.rss()
    with sampler.sampling():
        ballast = bytearray(64 * MIB)  # its own mapping: resident once touched, returned to the system when freed
        ballast[::4096] = b"x" * len(ballast[::4096])
        seen = sampler.samples
        while sampler.samples < seen + 2:
            time.sleep(0.01)
        del ballast
    assert sampler.peak >= base + 48 * MIB
    assert sampler.rss() < sampler.peak - 32 * MIB
