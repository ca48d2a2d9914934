"""Torch checkpoints built byte by byte so that torch.load and zipfile read different records.

torch.load reads a zip with PyTorch's bundled miniz (caffe2/serialize/inline_container.cc over
third_party/miniz-3.0.2/miniz.c); hfvet, numpy and the peer scanners with CPython's zipfile. Each
case looks like an ordinary checkpoint to zipfile (or is unreadable to it) while the ``data.pkl``
miniz hands to torch's unpickler runs ``posix.system("echo pwned")``. The benign case is the same
checkpoint written plainly: both readers agree on every record.
"""

from __future__ import annotations

import io
import struct
import tarfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from tests.corpus.registry import Case, one_file, register_all
from tests.samples import benign, hostile, readings

TOP = "archive"
_RECORD_TIME = 0x6000  # a non-zero DOS time, as every real writer stores


@dataclass(frozen=True)
class Entry:
    """One member as the builder writes it; the declared fields can lie about the data."""

    name: str
    data: bytes
    size: int | None = None  # declared uncompressed size (default: len(data))
    compressed_size: int | None = None  # declared compressed size (default: len(data))
    central_extra: bytes = b""
    flags: int = 0
    raw_name: bytes | None = None  # the name's bytes when they are not its UTF-8 (default: name.encode())

    def local(self) -> bytes:
        name = self.name_bytes
        return struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, _RECORD_TIME, 0x5821, zlib.crc32(self.data),
                           len(self.data), len(self.data), len(name), 0) + name + self.data

    @property
    def name_bytes(self) -> bytes:
        return self.name.encode() if self.raw_name is None else self.raw_name

    def central(self, header_offset: int) -> bytes:
        name = self.name_bytes
        size = len(self.data) if self.size is None else self.size
        compressed = len(self.data) if self.compressed_size is None else self.compressed_size
        return struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, self.flags, 0, _RECORD_TIME, 0x5821,
                           zlib.crc32(self.data), compressed, size, len(name), len(self.central_extra), 0, 0, 0,
                           0o600 << 16, header_offset) + name + self.central_extra


def end_record(count: int, directory_size: int, directory_offset: int, comment: bytes = b"") -> bytes:
    return struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, directory_size, directory_offset,
                       len(comment)) + comment


def zip64_end_record(count: int, directory_size: int, directory_offset: int) -> bytes:
    return struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, directory_size,
                       directory_offset)


def zip64_locator(record_offset: int) -> bytes:
    return struct.pack("<4sLQL", b"PK\x06\x07", 0, record_offset, 1)


def checkpoint_entries(data_pkl: bytes | None = None) -> list[Entry]:
    """A small torch.save state dict: the records torch writes, in its order."""
    good, storages = benign.torch_pickle()
    entries = [Entry(f"{TOP}/data.pkl", good if data_pkl is None else data_pkl),
               Entry(f"{TOP}/byteorder", b"little")]
    entries += [Entry(f"{TOP}/data/{key}", raw) for key, raw in storages.items()]
    return [*entries, Entry(f"{TOP}/version", b"3\n"), Entry(f"{TOP}/.data/serialization_id", b"0" * 40)]


@dataclass
class Layout:
    """Bytes written front to back, remembering where each local header went."""

    out: bytearray
    offsets: dict[int, int]  # id(entry) -> its local header offset

    @staticmethod
    def of(entries: list[Entry], pad_after_first: int = 0) -> Layout:
        layout = Layout(bytearray(), {})
        for i, entry in enumerate(entries):
            layout.offsets[id(entry)] = len(layout.out)
            layout.out += entry.local()
            if i == 0:
                layout.out += b"\x00" * pad_after_first  # junk between members: both readers skip it
        return layout

    def directory(self, entries: list[Entry], shift: int = 0) -> bytes:
        return b"".join(e.central(self.offsets[id(e)] - shift) for e in entries)


def plain_checkpoint(entries: list[Entry] | None = None) -> bytes:
    entries = checkpoint_entries() if entries is None else entries
    layout = Layout.of(entries)
    directory = layout.directory(entries)
    offset = len(layout.out)
    return bytes(layout.out + directory + end_record(len(entries), len(directory), offset))


def two_directories_by_offset() -> bytes:
    """The end record's directory offset names directory A (hostile data.pkl); directory B sits just
    before the end record. zipfile ``_RealGetContents`` takes the directory ``size`` bytes before the
    end record and shifts every offset by the difference ("concat", for prepended data); miniz
    ``mz_zip_reader_read_central_dir`` reads at the stated offset and shifts nothing."""
    hostile_pkl = Entry(f"{TOP}/data.pkl", hostile.by_protocol(2))
    seen_by_zipfile = checkpoint_entries()
    seen_by_miniz = [hostile_pkl, *seen_by_zipfile[1:]]
    probe = Layout.of([hostile_pkl, *seen_by_zipfile]).directory(seen_by_zipfile)
    layout = Layout.of([hostile_pkl, *seen_by_zipfile], pad_after_first=len(probe))
    directory_a = layout.directory(seen_by_miniz)
    directory_b = layout.directory(seen_by_zipfile, shift=len(directory_a))  # zipfile adds concat back
    assert len(directory_a) == len(directory_b)
    a_at = len(layout.out)
    body = layout.out + directory_a + directory_b
    return bytes(body + end_record(len(seen_by_zipfile), len(directory_b), a_at))


def two_directories_by_zip64_locator() -> bytes:
    """Two zip64 end records: zipfile ``_EndRecData64`` reads the one just before the locator (it
    assumes no extensible data); miniz ``mz_zip_reader_read_central_dir`` the one the locator's
    offset names, whose directory lists the hostile data.pkl."""
    hostile_pkl = Entry(f"{TOP}/data.pkl", hostile.by_protocol(2))
    seen_by_zipfile = checkpoint_entries()
    seen_by_miniz = [hostile_pkl, *seen_by_zipfile[1:]]
    layout = Layout.of([*seen_by_zipfile, hostile_pkl])
    body = layout.out
    a_at = len(body)
    directory_a = layout.directory(seen_by_miniz)
    record_a_at = a_at + len(directory_a)
    body += directory_a + zip64_end_record(len(seen_by_miniz), len(directory_a), a_at)
    b_at = len(body)
    directory_b = layout.directory(seen_by_zipfile)
    body += directory_b + zip64_end_record(len(seen_by_zipfile), len(directory_b), b_at)
    body += zip64_locator(record_a_at)
    return bytes(body + end_record(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF))


def end_signature_in_comment() -> bytes:
    """The end record's comment ends with ``PK\\x05\\x06``: zipfile ``_EndRecData`` takes the last
    signature, finds fewer than 22 bytes after it and calls the file no zip; miniz
    ``mz_zip_reader_locate_header_sig`` skips signatures without a whole record after them."""
    data = plain_checkpoint(checkpoint_entries(hostile.by_protocol(2)))
    comment = b"saved by trainer PK\x05\x06"
    return data[:-2] + struct.pack("<H", len(comment)) + comment


def end_record_beyond_zipfile_window() -> bytes:
    """67,000 bytes after the end record: past zipfile's 64 KiB comment window, inside miniz's
    backwards search, which reads 4 KiB blocks until one starts 64 KiB + 22 bytes from the end."""
    return plain_checkpoint(checkpoint_entries(hostile.by_protocol(2))) + b"\x00" * 67_000


def corrupt_extra_field() -> bytes:
    """A central extra field longer than its room on ``version``: zipfile ``ZipInfo._decodeExtra``
    raises BadZipFile; miniz reads extra fields only for zip64 values (``file_stat_internal``)."""
    entries = checkpoint_entries(hostile.by_protocol(2))
    entries = [Entry(e.name, e.data, central_extra=b"\x99\x99\x40\x00") if e.name.endswith("/version") else e
               for e in entries]
    return plain_checkpoint(entries)


def name_flagged_utf8_that_is_not() -> bytes:
    """An extra member whose name has the UTF-8 flag but is not UTF-8: zipfile ``_RealGetContents``
    decodes it strictly and raises; miniz compares bytes and never decodes a name."""
    entries = [*checkpoint_entries(hostile.by_protocol(2)),
               Entry(f"{TOP}/notes", b"x", flags=0x800, raw_name=f"{TOP}/notes-".encode() + b"\xff")]
    return plain_checkpoint(entries)


def stored_size_longer_than_data() -> bytes:
    """data.pkl stored, its compressed size cut before the payload, its size whole: zipfile (and
    hfvet's walk) read the compressed size; miniz ``extract_to_mem_no_alloc1`` reads a stored
    entry's uncompressed size, and its init check on equal sizes only applies when the DOS time is 0."""
    payload = hostile.by_protocol(2)
    entries = checkpoint_entries(payload)
    entries[0] = Entry(entries[0].name, payload, compressed_size=2)  # PROTO 2: then the walk sees nothing
    return plain_checkpoint(entries)


def duplicate_data_pkl() -> bytes:
    """Two ``data.pkl`` entries, the hostile one first and the benign one second to last: zipfile's
    ``NameToInfo`` keeps the last; miniz's binary search (``mz_zip_locate_file_binary_search``) over
    its heap sort of the names (``mz_zip_reader_sort_central_dir_offsets_by_filename``, not stable)
    lands on the first one for these seven names."""
    good, *rest = checkpoint_entries()
    return plain_checkpoint([Entry(f"{TOP}/data.pkl", hostile.by_protocol(2)), *rest[:-1], good, rest[-1]])


def case_folded_data_pkl() -> bytes:
    """``ARCHIVE/DATA.PKL``: miniz compares names ASCII case-insensitively (``mz_zip_filename_compare``),
    so torch.load unpickles it as ``archive/data.pkl``; zipfile has no entry of that name."""
    entries = checkpoint_entries(hostile.by_protocol(2))
    entries[0] = Entry(f"{TOP}/DATA.PKL", entries[0].data)
    return plain_checkpoint([entries[1], entries[0], *entries[2:]])


def legacy_tar_storages_by_link() -> bytes:
    """torch's legacy tar with ``storages`` a hard link to a regular member ``weights``: torch's
    ``legacy_load`` calls ``tar.extract("storages")``, and tarfile's ``_extract_member`` falls back to
    the link target's bytes, whose second storage record pickle runs the payload. Read as a plain
    member (stacked pickles) those records stop at the first storage's raw bytes."""
    plain = readings.torch_legacy_tar(hostile_in="storage")
    with tarfile.open(fileobj=io.BytesIO(plain)) as source:
        records = {info.name: source.extractfile(info).read() for info in source}  # type: ignore[union-attr]
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name in ("sys_info", "pickle", "weights", "storages", "tensors"):
            info = tarfile.TarInfo(name)
            if name == "storages":
                info.type, info.linkname = tarfile.LNKTYPE, "weights"
                archive.addfile(info)
                continue
            data = records["storages" if name == "weights" else name]
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


HOSTILE: dict[str, tuple[Callable[[], bytes], str]] = {
    "two-directories-by-offset": (two_directories_by_offset, "zipfile's concat shift vs miniz's stated offset"),
    "two-directories-by-zip64-locator": (two_directories_by_zip64_locator,
                                         "zip64 record before the locator vs the one it points at"),
    "end-signature-in-comment": (end_signature_in_comment, "zipfile refuses, torch.load loads"),
    "end-record-beyond-zipfile-window": (end_record_beyond_zipfile_window, "zipfile refuses, torch.load loads"),
    "corrupt-extra-field": (corrupt_extra_field, "zipfile refuses, torch.load loads"),
    "name-flagged-utf8-that-is-not": (name_flagged_utf8_that_is_not, "zipfile refuses, torch.load loads"),
    "stored-size-longer-than-data": (stored_size_longer_than_data, "torch reads past what hfvet read"),
    "duplicate-data-pkl": (duplicate_data_pkl, "miniz's sorted lookup vs zipfile's last entry"),
    "case-folded-data-pkl": (case_folded_data_pkl, "miniz finds names case-insensitively"),
}

register_all([
    Case("parser-differential", "legacy-tar-storages-by-link", "hostile",
         one_file("pytorch_model.bin", legacy_tar_storages_by_link),
         why="torch.load's legacy tar reading follows the 'storages' link to another member's records",
         rule="parser-differential"),
    *(Case("parser-differential", name, "hostile", one_file("pytorch_model.bin", build),
           why=f"torch.load (miniz) unpickles a data.pkl zipfile does not read: {why}", rule="parser-differential")
      for name, (build, why) in HOSTILE.items()),
    Case("parser-differential", "plain-byte-built-checkpoint", "benign",
         one_file("pytorch_model.bin", plain_checkpoint),
         why="the same records written plainly: miniz and zipfile agree on every one", vendor="approve"),
])
