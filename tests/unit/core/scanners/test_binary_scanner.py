"""BinaryScanner: native executables and archives carrying them, built byte by byte at test time."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import struct
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import py7zr
import pytest

from app.core.findings import Severity
from app.core.limits import Limits
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners.binary_scanner import BinaryScanner
from app.sources.local import LocalSource

PAYLOAD = b"echo pwned\n"


# ---- sample builders: minimal valid headers, a few hundred bytes each -------------------------

def elf(bits: int = 64, big: bool = False, etype: int = 3, machine: int = 62) -> bytes:
    order = ">" if big else "<"
    ident = b"\x7fELF" + bytes([2 if bits == 64 else 1, 2 if big else 1, 1, 0]) + bytes(8)
    if bits == 64:
        fields = (etype, machine, 1, 0x401000, 64, 0, 0, 64, 56, 0, 64, 0, 0)
        rest = struct.pack(order + "HHIQQQIHHHHHH", *fields)
    else:
        fields = (etype, machine, 1, 0x8048000, 52, 0, 0, 52, 32, 0, 40, 0, 0)
        rest = struct.pack(order + "HHIIIIIHHHHHH", *fields)
    return ident + rest + PAYLOAD + bytes(200)


def pe(machine: int = 0x8664, dll: bool = False, lfanew: int = 128) -> bytes:
    dos = bytearray(lfanew)
    dos[0:2] = b"MZ"
    struct.pack_into("<I", dos, 60, lfanew)
    coff = b"PE\x00\x00" + struct.pack("<HHIIIHH", machine, 1, 0, 0, 0, 240, 0x2022 if dll else 0x0022)
    optional = struct.pack("<H", 0x20B) + bytes(238)
    return bytes(dos) + coff + optional + PAYLOAD + bytes(100)


def macho(cputype: int = 0x0100000C, filetype: int = 6) -> bytes:
    return struct.pack("<IIIIIII", 0xFEEDFACF, cputype, 0, filetype, 0, 0, 0) + bytes(4) + bytes(200)


def fat_macho() -> bytes:
    header = struct.pack(">II", 0xCAFEBABE, 2)
    arches = struct.pack(">IIIII", 0x01000007, 3, 4096, 512, 12)
    arches += struct.pack(">IIIII", 0x0100000C, 0, 8192, 512, 14)
    return header + arches + bytes(300)


def ar_archive(members: dict[str, bytes]) -> bytes:
    out = bytearray(b"!<arch>\n")
    for name, data in members.items():
        out += f"{name:<16}{0:<12}{0:<6}{0:<6}{644:<8}{len(data):<10}`\n".encode()
        out += data + (b"\n" if len(data) % 2 else b"")
    return bytes(out)


def zip_bytes(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def tar_bytes(members: dict[str, bytes], mode: str = "w") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:  # type: ignore[call-overload]
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def vet_file(tmp_path: Path, name: str, data: bytes, limits: Limits | None = None) -> Report:
    (tmp_path / name).write_bytes(data)
    return vet(LocalSource(tmp_path), [BinaryScanner()], options=VetOptions(limits=limits, workers=1))


def rules(report: Report) -> set[tuple[str, Severity, str | None]]:
    return {(f.rule, f.severity, f.member) for f in report.findings}


# ---- top-level executables -----------------------------------------------------------------

@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (elf(), "ELF 64-bit LSB shared object (x86-64)"),
        (elf(bits=32, big=True, etype=2, machine=8), "ELF 32-bit MSB executable (mips)"),
        (elf(etype=1, machine=183), "ELF 64-bit LSB relocatable object (aarch64)"),
        (pe(dll=True), "PE DLL (x86-64)"),
        (pe(machine=0x14C), "PE executable (x86)"),
        (pe(machine=0xAA64, dll=True, lfanew=8000), "PE DLL (arm64)"),  # PE header past the sniff window
        (macho(), "Mach-O 64-bit dylib (arm64)"),
        (macho(cputype=0x01000007, filetype=2), "Mach-O 64-bit executable (x86_64)"),
        (fat_macho(), "Mach-O universal binary (x86_64, arm64)"),
    ],
)
def test_native_executables_are_named_by_kind_and_arch(tmp_path: Path, data: bytes, expected: str) -> None:
    report = vet_file(tmp_path, "weights.bin", data)  # the extension lies; content decides
    [finding] = report.findings
    assert (finding.rule, finding.severity) == ("executable-binary", Severity.HIGH)
    assert expected in finding.message
    assert report.files[0].scanned


def test_static_archive_names_its_object_files(tmp_path: Path) -> None:
    data = ar_archive({"/": b"\x00" * 8, "kernel.o/": elf(etype=1, machine=183)})
    [finding] = vet_file(tmp_path, "libkern.a", data).findings
    assert finding.rule == "executable-binary"
    assert "ar static archive (2 members)" in finding.message
    assert "ELF 64-bit LSB relocatable object (aarch64)" in finding.message


def test_elf_magic_with_a_broken_header_is_still_flagged(tmp_path: Path) -> None:
    [finding] = vet_file(tmp_path, "blob", b"\x7fELF\x09\x09" + bytes(100)).findings
    assert (finding.rule, finding.severity) == ("executable-binary", Severity.HIGH)
    assert "does not parse" in finding.message


# ---- archives carrying binaries or Python --------------------------------------------------

def test_wheel_with_shared_object_and_pth(tmp_path: Path) -> None:
    wheel = zip_bytes({
        "fastkern/__init__.py": b"from ._C import run\n",
        "fastkern/_C.cpython-311-x86_64-linux-gnu.so": elf(),
        "fastkern-1.0.pth": b"import os; os.system('echo pwned')\n",
        "fastkern-1.0.dist-info/METADATA": b"Name: fastkern\n",
    })
    report = vet_file(tmp_path, "fastkern-1.0-cp311-linux_x86_64.whl", wheel)
    assert report.files[0].format == "wheel"
    found = rules(report)
    assert ("archive-executable", Severity.HIGH, "fastkern/_C.cpython-311-x86_64-linux-gnu.so") in found
    assert ("archive-python-code", Severity.HIGH, "fastkern-1.0.pth") in found
    assert ("archive-python-code", Severity.MEDIUM, "fastkern/__init__.py") in found
    exe = next(f for f in report.findings if f.rule == "archive-executable")
    assert "ELF 64-bit LSB shared object (x86-64)" in exe.message


@pytest.mark.parametrize(("mode", "name"), [("w:gz", "a.tar.gz"), ("w:bz2", "a.tbz"), ("w:xz", "a.txz")])
def test_compressed_tar_with_elf(tmp_path: Path, mode: str, name: str) -> None:
    data = tar_bytes({"README": b"benign\n", "bin/tool": elf(etype=2)}, mode=mode)
    found = rules(vet_file(tmp_path, name, data))
    assert found == {("archive-executable", Severity.HIGH, "bin/tool")}


def test_plain_tar_is_walked_by_headers_only(tmp_path: Path) -> None:
    big = bytes(4 * 1024 * 1024)
    data = tar_bytes({"weights.raw": big, "lib/libx.so": elf()})
    report = vet_file(tmp_path, "bundle.tar", data)
    assert rules(report) == {("archive-executable", Severity.HIGH, "lib/libx.so")}
    assert report.stats.bytes_read < 300_000  # the 4 MiB member is seeked over, not read


@pytest.mark.parametrize("tar_format", [tarfile.PAX_FORMAT, tarfile.GNU_FORMAT])
def test_long_member_names_from_pax_and_gnu_headers(tmp_path: Path, tar_format: int) -> None:
    name = "vendor/" + "deep/" * 40 + "libkernel.so"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tar_format) as tf:
        info = tarfile.TarInfo(name)
        data = elf()
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    found = rules(vet_file(tmp_path, "bundle.tar", buf.getvalue()))
    assert found == {("archive-executable", Severity.HIGH, name)}


def test_corrupt_gzip_stream_is_malformed(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(tar_bytes({"a.txt": b"hello " * 2000})))
    data[40:60] = bytes(range(20))  # damage the deflate stream after the header sniff window
    found = rules(vet_file(tmp_path, "a.tar.gz", bytes(data)))
    assert {rule for rule, _, _ in found} == {"malformed-archive"}


def test_7z_with_windows_exe(tmp_path: Path) -> None:
    path = tmp_path / "model.7z"
    with py7zr.SevenZipFile(path, "w") as archive:
        archive.writestr(b"notes\n", "readme.txt")
        archive.writestr(pe(machine=0x14C), "setup.exe")
    report = vet(LocalSource(tmp_path), [BinaryScanner()], options=VetOptions(workers=1))
    assert rules(report) == {("archive-executable", Severity.HIGH, "setup.exe")}


def test_nested_zip_member_path_names_both_levels(tmp_path: Path) -> None:
    inner = zip_bytes({"lib/libx.so": elf()})
    outer = zip_bytes({"docs/a.txt": b"hello\n", "inner.zip": inner})
    found = rules(vet_file(tmp_path, "outer.zip", outer))
    assert found == {("archive-executable", Severity.HIGH, "inner.zip!lib/libx.so")}


def test_zip_in_gzip_in_tar(tmp_path: Path) -> None:
    inner = zip_bytes({"a.dll": pe(dll=True)}, method=zipfile.ZIP_STORED)
    data = tar_bytes({"pkg.zip.gz": gzip.compress(inner)})
    found = rules(vet_file(tmp_path, "bundle.tar", data))
    assert ("archive-executable", Severity.HIGH, "pkg.zip.gz!<gzip payload>!a.dll") in found


def test_torch_zip_with_a_stray_shared_object(tmp_path: Path) -> None:
    torch_zip = zip_bytes({
        "archive/data.pkl": b"\x80\x02}q\x00.",
        "archive/data/0": elf(),  # raw tensor bytes: torch never executes a storage
        "archive/code/__torch__/model.py": b"def forward(self, x):\n    return x\n",
        "archive/extra/helper.so": elf(),
    }, method=zipfile.ZIP_STORED)
    report = vet_file(tmp_path, "model.pt", torch_zip)
    assert report.files[0].format == "pytorch-zip"
    assert rules(report) == {("archive-executable", Severity.HIGH, "archive/extra/helper.so")}


def test_gzip_of_an_elf(tmp_path: Path) -> None:
    found = rules(vet_file(tmp_path, "tool.gz", gzip.compress(elf(etype=2))))
    assert found == {("archive-executable", Severity.HIGH, "<gzip payload>")}


# ---- malformed containers and limits -------------------------------------------------------

def test_local_header_name_differs_from_central_directory(tmp_path: Path) -> None:
    data = bytearray(zip_bytes({"safe.txt": elf()}, method=zipfile.ZIP_STORED))
    data[30 : 30 + 8] = b"evil.so\x00"[:8]  # first local header's name, same length
    found = rules(vet_file(tmp_path, "a.zip", bytes(data)))
    assert ("malformed-archive", Severity.HIGH, "safe.txt") in found
    assert ("archive-executable", Severity.HIGH, "safe.txt") in found  # still sniffed


def test_encrypted_flag_is_reported_and_content_still_sniffed(tmp_path: Path) -> None:
    data = bytearray(zip_bytes({"x.so": elf()}, method=zipfile.ZIP_STORED))
    central = data.index(b"PK\x01\x02")
    data[6] |= 1
    data[central + 8] |= 1
    found = rules(vet_file(tmp_path, "a.zip", bytes(data)))
    assert ("archive-unreadable-member", Severity.HIGH, "x.so") in found
    assert ("archive-executable", Severity.HIGH, "x.so") in found


def test_duplicate_member_names(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, pytest.warns(UserWarning):
        zf.writestr("model.txt", b"a")
        zf.writestr("model.txt", b"b")
    found = rules(vet_file(tmp_path, "a.zip", buf.getvalue()))
    assert found == {("malformed-archive", Severity.HIGH, "model.txt")}


def test_unreadable_zip_is_malformed_not_clean(tmp_path: Path) -> None:
    found = rules(vet_file(tmp_path, "a.zip", b"PK\x03\x04" + bytes(60)))
    assert {rule for rule, _, _ in found} == {"malformed-archive"}


def test_truncated_tar_is_malformed(tmp_path: Path) -> None:
    data = tar_bytes({"a.bin": bytes(5000), "b.txt": b"x"})
    found = rules(vet_file(tmp_path, "a.tar", data[:2048]))
    assert ("malformed-archive", Severity.HIGH, None) in found


def test_nesting_deeper_than_the_limit(tmp_path: Path) -> None:
    level = zip_bytes({"x.so": elf()})
    for _ in range(3):
        level = zip_bytes({"next.zip": level})
    found = rules(vet_file(tmp_path, "deep.zip", level, Limits(max_nesting=2)))
    assert ("limit-exceeded", Severity.HIGH, "next.zip!next.zip!next.zip") in found
    assert not any(rule == "archive-executable" for rule, _, _ in found)


def test_too_many_members(tmp_path: Path) -> None:
    data = zip_bytes({f"f{i}.txt": b"x" for i in range(10)})
    found = rules(vet_file(tmp_path, "many.zip", data, Limits(max_archive_members=3)))
    assert found == {("limit-exceeded", Severity.HIGH, None)}


def test_decompression_bomb_stops_at_the_limit(tmp_path: Path) -> None:
    data = tar_bytes({"zeros": bytes(2 * 1024 * 1024), "late.so": elf()}, mode="w:gz")
    found = rules(vet_file(tmp_path, "bomb.tgz", data, Limits(max_decompressed_bytes=256 * 1024)))
    assert ("limit-exceeded", Severity.HIGH, None) in found


def test_7z_bomb_stops_at_the_limit(tmp_path: Path) -> None:
    with py7zr.SevenZipFile(tmp_path / "b.7z", "w") as archive:
        archive.writestr(bytes(1024 * 1024), "zeros.bin")
    report = vet(LocalSource(tmp_path), [BinaryScanner()],
                 options=VetOptions(limits=Limits(max_decompressed_bytes=64 * 1024)))
    assert ("limit-exceeded", Severity.HIGH, None) in rules(report)


def test_corrupt_7z_is_malformed(tmp_path: Path) -> None:
    found = rules(vet_file(tmp_path, "a.7z", b"7z\xbc\xaf\x27\x1c\x00\x04" + bytes(40)))
    assert {rule for rule, _, _ in found} == {"malformed-archive"}


# ---- benign --------------------------------------------------------------------------------

METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)


@pytest.mark.parametrize("method", METHODS)
def test_zip_of_text_files_is_clean(tmp_path: Path, method: int) -> None:
    data = zip_bytes({"README.md": b"# notes\n" * 50, "data/labels.csv": b"id,label\n1,cat\n"}, method)
    report = vet_file(tmp_path, "extras.zip", data)
    assert report.findings == ()
    assert report.files[0].scanned


def test_every_compression_method_still_reveals_an_elf(tmp_path: Path) -> None:
    for method in METHODS:
        target = tmp_path / str(method)
        target.mkdir()
        report = vet_file(target, "a.zip", zip_bytes({"x": elf()}, method))
        assert {f.rule for f in report.findings} == {"archive-executable"}, method


def test_tar_of_text_files_is_clean(tmp_path: Path) -> None:
    report = vet_file(tmp_path, "docs.tar.gz", tar_bytes({"a.txt": b"hi\n", "b/c.json": b"{}"}, mode="w:gz"))
    assert report.findings == ()
    assert report.files[0].scanned


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_compressed_payload_without_code_is_clean(tmp_path: Path, compress: Callable[[bytes], bytes]) -> None:
    report = vet_file(tmp_path, "notes.gz", compress(b"just some text\n" * 10))
    assert report.findings == ()
    assert report.files[0].scanned  # the payload was sniffed: no binary in it


def test_zip_reads_only_headers_and_prefixes(tmp_path: Path) -> None:
    data = zip_bytes({"weights.raw": bytes(8 * 1024 * 1024), "lib.so": elf()}, method=zipfile.ZIP_STORED)
    report = vet_file(tmp_path, "big.zip", data)
    assert rules(report) == {("archive-executable", Severity.HIGH, "lib.so")}
    assert report.stats.bytes_read < 300_000
