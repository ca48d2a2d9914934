"""Archive member names an extractor would write outside its target: zip, tar and 7z alike.

Every sample is built at test time; payloads are inert strings. Each unsafe form, each
duplicate and each zip local/central name disagreement must be a high finding, also inside
nested archives and torch zips, and also for members hfvet never sniffs (directories,
torch storages).
"""

from __future__ import annotations

import io
import struct
import tarfile
import zipfile
import zlib
from pathlib import Path

import py7zr
import pytest

from app.core.findings import Severity
from tests.unit.core.scanners.test_binary_scanner import elf, rules, vet_file, zip_bytes

UNSAFE = "archive-unsafe-name"
MALFORMED = "malformed-archive"
BAD_NAMES = ["/etc/cron.d/x", "../x", "a/../../x", "..\\x", "a\\..\\..\\x", "C:\\x", "C:x", "\\\\host\\share\\x"]


def _zip_named(names: list[str], method: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for name in names:
            zf.writestr(zipfile.ZipInfo(name), b"echo pwned\n")
    return buf.getvalue()


def _tar_named(names: list[str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = 11
            tf.addfile(info, io.BytesIO(b"echo pwned\n"))
    return buf.getvalue()


def _7z_renamed(members: dict[str, bytes], renames: dict[str, str]) -> bytes:
    """A 7z whose stored names are patched after writing (py7zr refuses unsafe names)."""
    buf = io.BytesIO()
    with py7zr.SevenZipFile(buf, "w") as archive:
        archive.set_encoded_header_mode(False)  # a plain header, so names are patchable bytes
        for name, data in members.items():
            archive.writestr(data, name)
    data = bytearray(buf.getvalue())
    for old, new in renames.items():
        assert len(old) == len(new)
        at = data.index(old.encode("utf-16-le"))
        data[at : at + 2 * len(new)] = new.encode("utf-16-le")
    offset, size = struct.unpack_from("<QQ", data, 12)
    struct.pack_into("<I", data, 28, zlib.crc32(data[32 + offset : 32 + offset + size]))
    struct.pack_into("<I", data, 8, zlib.crc32(data[12:32]))
    return bytes(data)


def _found(tmp_path: Path, name: str, data: bytes) -> set[tuple[str, Severity, str | None]]:
    return rules(vet_file(tmp_path, name, data))


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_unsafe_zip_member_names_are_high(tmp_path: Path, bad: str) -> None:
    found = _found(tmp_path, "a.zip", _zip_named(["ok.txt", bad]))
    assert found == {(UNSAFE, Severity.HIGH, bad)}


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_unsafe_tar_member_names_are_high(tmp_path: Path, bad: str) -> None:
    found = _found(tmp_path, "a.tar", _tar_named(["ok.txt", bad]))
    assert found == {(UNSAFE, Severity.HIGH, bad)}


def test_unsafe_names_of_tar_links_and_directories(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, kind in (("../up", tarfile.DIRTYPE), ("/abs-link", tarfile.SYMTYPE)):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, "target"
            tf.addfile(info)
    assert _found(tmp_path, "a.tar", buf.getvalue()) == {
        (UNSAFE, Severity.HIGH, "../up"), (UNSAFE, Severity.HIGH, "/abs-link"),
    }


@pytest.mark.parametrize(("bad", "listed"), [("../xx", "../xx"), ("/etc/", "/etc/"), ("C:\\x", "C:/x")])
def test_unsafe_7z_member_names_are_high(tmp_path: Path, bad: str, listed: str) -> None:
    stored = "Q" * len(bad)
    data = _7z_renamed({"ok.txt": b"fine\n", stored: b"echo pwned\n"}, {stored: bad})
    found = _found(tmp_path, "a.7z", data)
    assert (UNSAFE, Severity.HIGH, listed) in found  # py7zr lists backslashes as "/"


def test_duplicates_in_tar_and_by_normalised_path_in_zip(tmp_path: Path) -> None:
    for sub in ("t", "z"):
        (tmp_path / sub).mkdir()
    assert _found(tmp_path / "t", "a.tar", _tar_named(["model.txt", "model.txt"])) == {
        (MALFORMED, Severity.HIGH, "model.txt"),
    }
    found = _found(tmp_path / "z", "a.zip", _zip_named(["a/b.txt", "a//./b.txt", "a\\b.txt"]))
    assert found == {(MALFORMED, Severity.HIGH, "a//./b.txt"), (MALFORMED, Severity.HIGH, "a\\b.txt")}


def test_7z_duplicates_are_high_and_both_copies_are_sniffed(tmp_path: Path) -> None:
    data = _7z_renamed({"notes.txt": b"fine\n", "notes.bin": elf()}, {"notes.bin": "notes.txt"})
    found = _found(tmp_path, "a.7z", data)
    assert (MALFORMED, Severity.HIGH, "notes.txt") in found
    assert ("archive-executable", Severity.HIGH, "notes.txt") in found  # the second copy was hidden


def test_7z_member_whose_name_py7zr_cleans_is_still_sniffed(tmp_path: Path) -> None:
    data = _7z_renamed({"ok.txt": b"fine\n", "QQlib.so": elf()}, {"QQlib.so": "./lib.so"})
    assert ("archive-executable", Severity.HIGH, "./lib.so") in _found(tmp_path, "a.7z", data)


def test_nested_archives_report_the_full_member_path(tmp_path: Path) -> None:
    inner_zip = _zip_named(["../../evil.sh"])
    outer = io.BytesIO()
    with tarfile.open(fileobj=outer, mode="w:gz") as tf:
        info = tarfile.TarInfo("pkg/inner.zip")
        info.size = len(inner_zip)
        tf.addfile(info, io.BytesIO(inner_zip))
    assert _found(tmp_path, "a.tgz", outer.getvalue()) == {(UNSAFE, Severity.HIGH, "pkg/inner.zip!../../evil.sh")}


def test_torch_zip_with_an_unsafe_storage_name(tmp_path: Path) -> None:
    torch_zip = zip_bytes({
        "archive/data.pkl": b"\x80\x02}q\x00.",
        "archive/data/0": bytes(64),
        "archive/data/../../../x": bytes(8),
    }, method=zipfile.ZIP_STORED)
    report = vet_file(tmp_path, "model.pt", torch_zip)
    assert report.files[0].format == "pytorch-zip"
    assert rules(report) == {(UNSAFE, Severity.HIGH, "archive/data/../../../x")}


def test_local_header_name_of_an_unsniffed_torch_storage(tmp_path: Path) -> None:
    data = bytearray(zip_bytes({
        "archive/data.pkl": b"\x80\x02}q\x00.", "archive/data/0": bytes(64),
    }, method=zipfile.ZIP_STORED))
    at = data.index(b"archive/data/0")  # the local header's copy comes first
    data[at : at + 14] = b"../../../../.x"
    found = _found(tmp_path, "model.pt", bytes(data))
    assert (MALFORMED, Severity.HIGH, "archive/data/0") in found  # names differ
    assert (UNSAFE, Severity.HIGH, "archive/data/0") in found  # and the local one climbs out


def test_directory_entries_are_checked_too(tmp_path: Path) -> None:
    assert _found(tmp_path, "a.zip", _zip_named(["../up/"])) == {(UNSAFE, Severity.HIGH, "../up/")}


@pytest.mark.parametrize("names", [["a.txt", "b/./c.txt", "d/e..f.txt", "x..", "..y/z"], ["./a", "b"]])
def test_ordinary_names_stay_clean(tmp_path: Path, names: list[str]) -> None:
    for kind, data in (("zip", _zip_named(names)), ("tar", _tar_named(names))):
        (tmp_path / kind).mkdir()
        assert vet_file(tmp_path / kind, f"a.{kind}", data).findings == ()
