"""BinaryScanner fail-open regressions: archives that hid native code from the walk.

Tar: each sample hides an ELF where ``tarfile.extractall`` still writes it out; before the
fix the walk skipped it or lost sync. Zip: a zip named "keras" by its member names was
not walked at all.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from app.core.findings import Severity
from tests.unit.core.scanners.test_binary_scanner import elf, rules, vet_file, zip_bytes

HIDDEN = ("archive-executable", Severity.HIGH)


def _extracted(data: bytes, name: str) -> bytes:
    """What the loader writes out for ``name`` (tarfile extracts unknown types as files)."""
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        handle = archive.extractfile(name)
        assert handle is not None
        return handle.read()


def _gnu_header(name: str, kind: bytes, size: int, extended: bool = False) -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size
    block = bytearray(info.tobuf(format=tarfile.GNU_FORMAT))
    if extended:
        block[482] = 1  # one sparse extension block follows the header
        block[148:156] = b" " * 8
        block[148:156] = b"%06o\x00 " % sum(block)
    return bytes(block)


def _regular(name: str, data: bytes) -> bytes:
    return _gnu_header(name, tarfile.REGTYPE, len(data)) + data + bytes(-len(data) % 512)


def test_unknown_member_type_is_sniffed_as_tarfile_extracts_it(tmp_path: Path) -> None:
    data = _gnu_header("tool", b"Z", len(elf())) + elf() + bytes(-len(elf()) % 512) + bytes(1024)
    assert _extracted(data, "tool") == elf()
    assert (*HIDDEN, "tool") in rules(vet_file(tmp_path, "a.tar", data))


def test_pax_size_on_a_directory_does_not_hide_the_next_member(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as archive:
        folder = tarfile.TarInfo("dir")
        folder.type, folder.pax_headers = tarfile.DIRTYPE, {"size": "1536"}
        archive.addfile(folder)
        library = tarfile.TarInfo("lib.so")
        library.size = len(elf())
        archive.addfile(library, io.BytesIO(elf()))
    assert _extracted(buf.getvalue(), "lib.so") == elf()
    assert (*HIDDEN, "lib.so") in rules(vet_file(tmp_path, "a.tar", buf.getvalue()))


def test_sparse_extension_blocks_do_not_desync_the_walk(tmp_path: Path) -> None:
    # Read as data, the extension block would shift every later header by 512 bytes onto an
    # all-zero block: the walk would see "end of archive" before lib.so.
    sparse = _gnu_header("sparse", tarfile.GNUTYPE_SPARSE, 512, extended=True) + bytes(512) + bytes(512)
    data = sparse + _regular("lib.so", elf()) + bytes(1024)
    assert _extracted(data, "lib.so") == elf()
    assert (*HIDDEN, "lib.so") in rules(vet_file(tmp_path, "a.tar", data))


def test_a_truncated_sparse_header_is_malformed(tmp_path: Path) -> None:
    data = _gnu_header("sparse", tarfile.GNUTYPE_SPARSE, 512, extended=True) + bytes(100)
    found = rules(vet_file(tmp_path, "a.tar", data))
    assert ("malformed-archive", Severity.HIGH, None) in found


def test_a_wheel_that_also_looks_like_keras_is_still_walked(tmp_path: Path) -> None:
    # config.json plus any .h5 makes sniffing call the zip "keras"; the payload must still show.
    data = zip_bytes({"pkg/evil.so": elf(), "evil.pth": b"import os\n", "config.json": b"{}", "w.h5": b"x"})
    report = vet_file(tmp_path, "tool-1.0-py3-none-any.whl", data)
    assert report.files[0].format == "keras"
    found = rules(report)
    assert (*HIDDEN, "pkg/evil.so") in found
    assert ("archive-python-code", Severity.HIGH, "evil.pth") in found
