"""Container readers: zip tricks torch ignores, nesting, npy, 7z, tar, compression, bounds."""

from __future__ import annotations

import gzip
import io
import tarfile
import zlib

import numpy as np
import py7zr
import pytest

from app.core.findings import Finding, FindingSink, Severity
from app.core.formats.blobs import BudgetBlob, BytesBlob
from app.core.formats.detect import HEAD_BYTES, detect_format
from app.core.limits import Limits, ReadBudgetExceeded
from app.core.scanners.pickle_engine.walker import ContainerWalker
from tests.samples import benign, hostile
from tests.samples import opcodes as op


class CountingBlob(BytesBlob):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.bytes_read = 0

    def read(self, offset: int, length: int) -> bytes:
        data = super().read(offset, length)
        self.bytes_read += len(data)
        return data


def walk(data: bytes, limits: Limits | None = None, fmt: str | None = None) -> list[Finding]:
    sink = FindingSink("file", "hfvet-pickle")
    fmt = fmt or detect_format(data[:HEAD_BYTES], len(data))
    ContainerWalker(sink, limits or Limits()).scan(BytesBlob(data), fmt)
    return sink.findings


def rules(findings: list[Finding]) -> set[tuple[str, str | None]]:
    return {(f.rule, f.member) for f in findings}


@pytest.mark.parametrize("patch", [{"crc": True}, {"flag": True}, {"rename": True}])
def test_zip_tricks_torch_ignores_do_not_hide_the_payload(patch: dict[str, bool]) -> None:
    findings = walk(hostile.torch_zip(**patch), fmt="pytorch-zip")
    assert ("pickle-dangerous-global", "archive/data.pkl") in rules(findings)


def test_every_pickle_member_is_scanned_not_only_data_pkl() -> None:
    found = rules(walk(hostile.torch_zip_extra_pickle(), fmt="pytorch-zip"))
    assert ("pickle-dangerous-global", "archive/constants.pkl") in found
    assert ("pickle-dangerous-global", "archive/payload") in found  # no extension, sniffed as pickle
    assert not any(member == "archive/data.pkl" for _, member in found)


def test_torch_storage_records_are_never_read() -> None:
    pickle_bytes, _ = benign.torch_pickle()
    blob = CountingBlob(op.zip_bytes({"archive/data.pkl": pickle_bytes, "archive/data/0": b"\x80\x02" * 2_000_000}))
    sink = FindingSink("file", "hfvet-pickle")
    ContainerWalker(sink, Limits()).scan(blob, "pytorch-zip")
    assert sink.findings == []
    assert blob.bytes_read < 200_000  # central directory + data.pkl, not the 4 MB storage


def test_nested_archives_name_the_member_path() -> None:
    assert ("pickle-dangerous-global", "nested/inner.zip!archive/data.pkl") in rules(walk(hostile.zip_in_zip()))


def test_nesting_deeper_than_the_limit_is_reported() -> None:
    data = hostile.torch_zip()
    for depth in range(5):
        data = op.zip_bytes({f"level{depth}.zip": data})
    findings = walk(data, Limits(max_nesting=3))
    assert any(f.rule == "limit-exceeded" and f.severity is Severity.HIGH for f in findings)
    assert not any(f.rule == "pickle-dangerous-global" for f in findings)


def test_decompression_is_bounded() -> None:
    big = op.proto(4) + op.binbytes(b"\x00" * 100_000) + op.POP + hostile.by_protocol(2)[2:]
    data = op.zip_bytes({"archive/data.pkl": big}, op.zipfile.ZIP_DEFLATED)
    findings = walk(data, Limits(max_decompressed_bytes=10_000), fmt="pytorch-zip")
    assert ("limit-exceeded", "archive/data.pkl") in rules(findings)


def test_member_count_is_bounded() -> None:
    data = op.zip_bytes({f"f{i}.txt": b"x" for i in range(20)})
    assert ("limit-exceeded", None) in rules(walk(data, Limits(max_archive_members=5)))


def test_unreadable_zip_is_high_not_clean() -> None:
    findings = walk(b"PK\x03\x04" + b"\x00" * 100, fmt="zip")
    assert [(f.rule, f.severity) for f in findings] == [("container-unreadable", Severity.HIGH)]


def test_non_object_npy_body_is_not_read() -> None:
    blob = CountingBlob(benign.npy(np.zeros(1_000_000, dtype="f4")))
    sink = FindingSink("file", "hfvet-pickle")
    ContainerWalker(sink, Limits()).scan(blob, "numpy")
    assert sink.findings == [] and blob.bytes_read < 100_000


@pytest.mark.parametrize("descr", ["'|O'", "[('a', '<f4'), ('b', '|O')]", "'f4,O'"])
def test_object_npy_body_is_analysed(descr: str) -> None:
    assert ("pickle-dangerous-global", None) in rules(walk(hostile.npy_object(descr)))


def test_malformed_npy_header_is_reported() -> None:
    bad = b"\x93NUMPY\x01\x00" + (20).to_bytes(2, "little") + b"{'descr': (((((((((("
    assert ("container-unreadable", None) in rules(walk(bad))


def test_npz_object_member_is_found() -> None:
    assert ("pickle-dangerous-global", "evil.npy") in rules(walk(hostile.npz_object()))


def test_legacy_torch_stops_before_raw_storages() -> None:
    data = benign.torch_legacy() + b"\x00" * 3_000_000
    blob = CountingBlob(data)
    sink = FindingSink("file", "hfvet-pickle")
    ContainerWalker(sink, Limits()).scan(blob, "torch-legacy")
    assert sink.findings == [] and blob.bytes_read < 200_000


def test_legacy_torch_payload_in_fourth_pickle() -> None:
    assert ("pickle-dangerous-global", None) in rules(walk(hostile.legacy_torch_payload()))


@pytest.mark.parametrize("kind", ["zlib", "gzip", "bz2", "xz"])
def test_compressed_payloads_are_decompressed(kind: str) -> None:
    assert ("pickle-dangerous-global", None) in rules(walk(hostile.compressed(kind)()))


def test_text_that_merely_starts_like_zlib_is_low() -> None:
    findings = walk(b"x^2 + y^2 = z^2 is a famous equation\n")
    assert [(f.rule, f.severity) for f in findings] == [("container-unreadable", Severity.LOW)]


def test_corrupt_gzip_is_high() -> None:
    data = gzip.compress(hostile.by_protocol(2))[:12] + b"\x00" * 40
    assert any(f.rule in ("container-unreadable", "pickle-broken-stream") and f.severity is Severity.HIGH
               for f in walk(data))


def test_sevenzip_members_are_analysed() -> None:
    found = rules(walk(hostile.sevenzip(hostile.torch_zip(), "pytorch_model.bin")))
    assert ("pickle-dangerous-global", "pytorch_model.bin!archive/data.pkl") in found


def test_encrypted_sevenzip_is_unreadable() -> None:
    out = io.BytesIO()
    with py7zr.SevenZipFile(out, "w", password="secret") as archive:
        archive.writestr(hostile.by_protocol(2), "model.pkl")
    assert ("container-unreadable", None) in rules(walk(out.getvalue()))


def test_tar_members_are_analysed() -> None:
    found = rules(walk(hostile.zip_in_targz()))
    assert ("pickle-dangerous-global", "ckpt/model.pt!model/data.pkl") in found


def test_plain_tar_of_a_pickle() -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        data = hostile.by_protocol(3)
        info = tarfile.TarInfo("pickle")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    assert ("pickle-dangerous-global", "pickle") in rules(walk(out.getvalue()))


def test_joblib_zlib_benign_is_clean() -> None:
    assert walk(zlib.compress(benign.joblib_like(), 3)) == []


def _tar(members: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_tar_members_after_a_bad_header_are_analysed() -> None:
    bad = bytearray(_tar([("junk", b"x")])[:1024])
    bad[148:156] = b"0000000\x00"  # wrong checksum: GNU tar skips to the next header and extracts on
    data = _tar([("ok.txt", b"hello")])[:1024] + bytes(bad) + _tar([("evil.pkl", hostile.by_protocol(2))])
    assert ("pickle-dangerous-global", "evil.pkl") in rules(walk(data))


@pytest.mark.parametrize("magic", [b"\x28\xb5\x2f\xfd", b"\x04\x22\x4d\x18"])
def test_member_compressed_in_a_format_we_cannot_read_is_not_silent(magic: bytes) -> None:
    findings = walk(op.zip_bytes({"model.joblib": magic + b"\x00" * 64}))
    assert [(f.rule, f.member) for f in findings] == [("container-unreadable", "model.joblib")]


@pytest.mark.parametrize(
    ("data", "fmt"),
    [
        (op.zip_bytes({f"m{i}.pkl": hostile.by_protocol(2) + b"\x00" * 4000 for i in range(5)}), "zip"),
        (hostile.sevenzip(hostile.by_protocol(2) + b"\x00" * 20_000, "m.pkl"), "7z"),
    ],
)
def test_read_budget_stops_the_whole_walk(data: bytes, fmt: str) -> None:
    sink = FindingSink("file", "hfvet-pickle")
    with pytest.raises(ReadBudgetExceeded):
        ContainerWalker(sink, Limits()).scan(BudgetBlob(BytesBlob(data), len(data) // 2), fmt)
    assert not any(f.rule in ("container-unreadable", "limit-exceeded") for f in sink.findings)
