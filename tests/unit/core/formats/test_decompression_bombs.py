"""Decompression bombs of every kind hfvet inflates: each is a high limit-exceeded finding.

Samples are zeros (inert) compressed at test time. Limits are scaled down so a bomb is a
few MB: the expansion ratio is judged past a 1 MiB floor, sizes past 32 MiB.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import py7zr
import pytest

from app.core.findings import Finding, Severity
from app.core.limits import DecompressionBomb, Limits
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners import all_scanners
from app.core.verdict import Verdict
from app.sources.local import LocalSource

MiB = 1024 * 1024
LIMITS = Limits(max_decompressed_bytes=32 * MiB, expansion_ratio_floor=1 * MiB, max_expansion_ratio=100)
ZEROS = bytes(8 * MiB)  # ~8 KB deflated: ~1000:1, a bomb by ratio, far below the size cap


def tar_of(data: bytes, name: str = "zeros.bin") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zip_of(members: dict[str, bytes], method: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def sevenzip_of(data: bytes) -> bytes:
    buf = io.BytesIO()
    with py7zr.SevenZipFile(buf, "w") as archive:
        archive.writestr(data, "zeros.bin")
    return buf.getvalue()


BOMBS: dict[str, Callable[[], bytes]] = {
    "zip-deflate.zip": lambda: zip_of({"inner.tar": tar_of(ZEROS)}, zipfile.ZIP_DEFLATED),
    "zip-bzip2.zip": lambda: zip_of({"inner.tar": tar_of(ZEROS)}, zipfile.ZIP_BZIP2),
    "zip-lzma.zip": lambda: zip_of({"inner.tar": tar_of(ZEROS)}, zipfile.ZIP_LZMA),
    "torch.pt": lambda: zip_of({"archive/data.pkl": b"\x80\x02" + ZEROS}, zipfile.ZIP_DEFLATED),
    "zeros.gz": lambda: gzip.compress(ZEROS),
    "zeros.bz2": lambda: bz2.compress(ZEROS),
    "zeros.xz": lambda: lzma.compress(ZEROS),
    "zeros.zlib": lambda: zlib.compress(ZEROS, 9),
    "zeros.tar.gz": lambda: gzip.compress(tar_of(ZEROS)),
    "zeros.7z": lambda: sevenzip_of(ZEROS),
}


def vet_one(tmp_path: Path, name: str, data: bytes, limits: Limits = LIMITS) -> Report:
    (tmp_path / name).write_bytes(data)
    return vet(LocalSource(tmp_path), all_scanners(), options=VetOptions(limits=limits, workers=1))


def bomb_findings(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.rule == "limit-exceeded" and "decompression bomb" in f.message]


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_every_bomb_kind_is_a_high_finding_and_rejected(tmp_path: Path, name: str) -> None:
    report = vet_one(tmp_path, name, BOMBS[name]())
    found = bomb_findings(report)
    assert found, [(f.scanner, f.rule, f.message) for f in report.findings]
    assert all(f.severity is Severity.HIGH for f in found)
    assert report.verdict is Verdict.REJECT


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_the_same_data_under_default_limits_is_no_bomb(tmp_path: Path, name: str) -> None:
    # 8 MiB is below the default 16 MiB ratio floor: zeros of that size are not judged.
    assert bomb_findings(vet_one(tmp_path, name, BOMBS[name](), Limits())) == []


def test_both_own_engines_report_a_zip_member_bomb(tmp_path: Path) -> None:
    report = vet_one(tmp_path, "zip-deflate.zip", BOMBS["zip-deflate.zip"]())
    assert {f.scanner for f in bomb_findings(report)} >= {"binaries", "hfvet-pickle"}
    assert any(f.member == "inner.tar" for f in bomb_findings(report))


def test_peers_stop_at_a_declared_bomb(tmp_path: Path) -> None:
    report = vet_one(tmp_path, "torch.pt", BOMBS["torch.pt"]())
    assert {"picklescan", "modelscan"} <= {f.scanner for f in bomb_findings(report)}


def test_a_lying_declared_size_is_a_bomb_before_anything_is_inflated(tmp_path: Path) -> None:
    data = bytearray(zip_of({"inner.tar": tar_of(b"x" * 1000)}, zipfile.ZIP_DEFLATED))
    central = data.rindex(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 64 * MiB)  # declared uncompressed size
    found = bomb_findings(vet_one(tmp_path, "liar.zip", bytes(data)))
    assert any("declares" in f.message and f.member == "inner.tar" for f in found)


def test_many_small_members_are_judged_as_one_archive(tmp_path: Path) -> None:
    members = {f"part{i}.bin": bytes(512 * 1024) for i in range(8)}  # each under the 1 MiB floor
    report = vet_one(tmp_path, "parts.zip", zip_of(members, zipfile.ZIP_DEFLATED))
    assert any(f.member is None and "zip archive declares" in f.message for f in bomb_findings(report))


def test_size_limit_without_ratio_is_still_a_bomb() -> None:
    limits = Limits(max_decompressed_bytes=10, expansion_ratio_floor=0, max_expansion_ratio=10**9)
    with pytest.raises(DecompressionBomb, match="more than 10 bytes"):
        limits.check_expansion(11, 11, "stream")


def test_ratio_is_not_judged_below_the_floor() -> None:
    limits = Limits(expansion_ratio_floor=MiB, max_expansion_ratio=2)
    limits.check_expansion(MiB, 1, "stream")  # 1,048,576:1 but only 1 MiB out: allowed
    with pytest.raises(DecompressionBomb, match="over 2:1"):
        limits.check_expansion(MiB + 1, 1, "stream")
