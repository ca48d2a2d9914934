"""torch.load's zip reading (PyTorch's miniz) beside zipfile's: every byte-built differential is
rejected through the real pipeline, and ordinary checkpoints read alike.

The hostile builders live in tests/corpus/differential.py; each names the loader function it
reproduces (zipfile.py ``_EndRecData``/``_EndRecData64``/``_RealGetContents``/``_decodeExtra``,
miniz.c ``mz_zip_reader_locate_header_sig``/``mz_zip_reader_read_central_dir``/
``mz_zip_locate_file_binary_search``/``mz_zip_reader_extract_to_mem_no_alloc1``).
"""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest

from app.core.findings import Finding, Severity
from app.core.formats import zip_differential, zip_reader
from app.core.formats.blobs import BytesBlob
from app.core.formats.miniz_entries import MinizError
from app.core.formats.miniz_sort import sorted_order
from app.core.formats.miniz_zip import TorchArchive, read_archive
from app.core.pipeline import VetOptions, vet
from app.core.scanners import all_scanners
from app.core.scanners.pickle_scanner import PickleScanner
from app.core.verdict import Verdict
from app.sources.local import LocalSource
from tests.corpus import benign_shapes, differential, torch_writer
from tests.corpus.verdicts import decisions_by_tier, default_policy
from tests.samples import benign, hostile, readings


def _pickle_findings(folder: Path) -> list[Finding]:
    report = vet(LocalSource(folder), [PickleScanner()], options=VetOptions(workers=1))
    return [f for f in report.findings if f.scanner == PickleScanner.name]


def _differential(data: bytes) -> zip_differential.Differential | None:
    blob = BytesBlob(data)
    try:
        members, error = zip_reader.read_directory(blob), None
    except Exception as exc:  # noqa: BLE001 - whatever zipfile raised, the comparison is told
        members, error = None, str(exc)
    return zip_differential.compare(blob, members, error)


@pytest.mark.parametrize("name", sorted(differential.HOSTILE))
def test_each_differential_is_critical_and_torchs_data_pkl_is_vetted(name: str, tmp_path: Path) -> None:
    build, _ = differential.HOSTILE[name]
    (tmp_path / "pytorch_model.bin").write_bytes(build())
    found = _pickle_findings(tmp_path)
    rules = {(f.rule, f.severity) for f in found}
    assert ("parser-differential", Severity.CRITICAL) in rules
    assert ("pickle-dangerous-global", Severity.CRITICAL) in rules  # the payload torch would run


@pytest.mark.parametrize("name", ["two-directories-by-offset", "two-directories-by-zip64-locator",
                                  "end-signature-in-comment", "stored-size-longer-than-data"])
def test_the_payload_is_found_only_in_torchs_reading(name: str, tmp_path: Path) -> None:
    build, _ = differential.HOSTILE[name]
    (tmp_path / "pytorch_model.bin").write_bytes(build())
    dangerous = [f for f in _pickle_findings(tmp_path) if f.rule == "pickle-dangerous-global"]
    assert dangerous and all(f.member == "miniz:archive/data.pkl" for f in dangerous)


@pytest.mark.parametrize("name", sorted(differential.HOSTILE))
def test_each_differential_is_rejected_at_every_tier(name: str, tmp_path: Path) -> None:
    build, _ = differential.HOSTILE[name]
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "pytorch_model.bin").write_bytes(build())
    decisions = decisions_by_tier(folder, default_policy())
    assert {tier: d.verdict for tier, d in decisions.items()} == {
        "vendor-official": Verdict.REJECT, "third-party": Verdict.REJECT}


def test_zipfile_and_miniz_really_disagree_on_the_hostile_files() -> None:
    # The premise of each case, checked against CPython's own zipfile (never unpickling anything).
    offset = differential.two_directories_by_offset()
    assert zipfile.ZipFile(io.BytesIO(offset)).read("archive/data.pkl") != hostile.by_protocol(2)
    for refused in ("end-signature-in-comment", "end-record-beyond-zipfile-window", "corrupt-extra-field",
                    "name-flagged-utf8-that-is-not"):
        with pytest.raises((zipfile.BadZipFile, UnicodeDecodeError)):
            zipfile.ZipFile(io.BytesIO(differential.HOSTILE[refused][0]()))
    torch = TorchArchive.open(BytesBlob(offset))
    entry = torch.record("data.pkl")
    assert entry is not None and entry.header_offset == 0 and entry.bytes_read == len(hostile.by_protocol(2))


def test_plain_checkpoints_read_alike() -> None:
    state = benign_shapes._bert_state_dict(2)
    for data in (differential.plain_checkpoint(), torch_writer.save_zip(state, "pytorch_model"),
                 benign.torch_zip(), benign.torch_zip(deflate=True), hostile.torch_zip()):
        assert _differential(data) is None


def test_a_plain_checkpoint_has_no_differential_through_all_scanners(tmp_path: Path) -> None:
    (tmp_path / "pytorch_model.bin").write_bytes(differential.plain_checkpoint())
    report = vet(LocalSource(tmp_path), all_scanners(), options=VetOptions(workers=1))
    assert "parser-differential" not in {f.rule for f in report.findings}
    assert [f for f in report.findings if f.severity.rank >= Severity.MEDIUM.rank] == []


def test_zips_torch_would_not_load_are_not_compared() -> None:
    no_data_pkl = io.BytesIO()
    with zipfile.ZipFile(no_data_pkl, "w") as zf:
        zf.writestr("weights/a.npy", b"\x93NUMPY")
    assert _differential(no_data_pkl.getvalue()) is None
    appended = b"\x80\x02N." + differential.two_directories_by_offset()  # torch: not a zip at offset 0
    assert zip_differential.compare(BytesBlob(appended), None, "x") is None


# -- the miniz reader on its own (miniz.c functions named in each test)

def test_end_record_search_reaches_past_zipfiles_window_but_not_forever() -> None:
    # mz_zip_reader_locate_header_sig: 4 KiB blocks back until one starts 64 KiB + 22 bytes from the end.
    plain = differential.plain_checkpoint()
    assert read_archive(BytesBlob(plain + b"\x00" * 69_000)).entries
    with pytest.raises(MinizError):
        read_archive(BytesBlob(plain + b"\x00" * 70_000))


def test_a_signature_without_a_whole_record_after_it_is_skipped() -> None:
    archive = read_archive(BytesBlob(differential.end_signature_in_comment()))
    assert next(e.name for e in archive.entries) == b"archive/data.pkl"


def test_names_are_found_case_insensitively() -> None:
    torch = TorchArchive.open(BytesBlob(differential.case_folded_data_pkl()))
    entry = torch.record("data.pkl")
    assert entry is not None and entry.name == b"archive/DATA.PKL"
    assert torch.record("DaTa.PkL") == entry


def test_the_heap_sort_decides_between_equal_names() -> None:
    # mz_zip_reader_sort_central_dir_offsets_by_filename: not stable, so equal names end up in the
    # order its swaps leave them. By hand for three equal keys: no sift-down moves anything, the
    # second phase swaps 2<->0 ([2, 1, 0]) then 1<->0 ([1, 2, 0]).
    assert sorted_order([b"a", b"a", b"a"]) == [1, 2, 0]
    assert sorted_order([b"b", b"a", b"c"]) == [1, 0, 2]  # without ties: plain order


def test_the_zip64_locator_offset_is_followed() -> None:
    archive = read_archive(BytesBlob(differential.two_directories_by_zip64_locator()))
    assert archive.zip64
    assert archive.entries[0].header_offset > 0  # the hostile data.pkl, appended after the others


def test_a_stored_entry_is_read_for_its_uncompressed_size() -> None:
    torch = TorchArchive.open(BytesBlob(differential.stored_size_longer_than_data()))
    entry = torch.record("data.pkl")
    assert entry is not None and (entry.compressed_size, entry.bytes_read) == (2, len(hostile.by_protocol(2)))


def test_a_stored_entry_with_zero_time_must_have_equal_sizes() -> None:
    # read_central_dir reads method and time as one 32-bit value: time 0 makes the check apply.
    data = bytearray(differential.stored_size_longer_than_data())
    directory = data.index(b"PK\x01\x02")
    struct.pack_into("<H", data, directory + 12, 0)
    with pytest.raises(MinizError, match="stored sizes"):
        read_archive(BytesBlob(bytes(data)))


def test_a_dos_directory_attribute_makes_miniz_read_nothing() -> None:
    data = bytearray(differential.plain_checkpoint())
    directory = data.index(b"PK\x01\x02")
    struct.pack_into("<L", data, directory + 38, 0x10)
    found = _differential(bytes(data))
    assert found is not None and "0 bytes read" in found.evidence


def test_an_entry_count_short_of_the_directory_is_a_differential() -> None:
    # zipfile reads entries while the directory size lasts; miniz reads the end record's count.
    data = bytearray(differential.plain_checkpoint())
    end = data.rindex(b"PK\x05\x06")
    count = struct.unpack_from("<H", data, end + 8)[0]
    struct.pack_into("<2H", data, end + 8, count - 1, count - 1)
    found = _differential(bytes(data))
    assert found is not None and "only zipfile reads" in found.evidence


# -- torch's legacy tar reading (torch/serialization.py legacy_load over tarfile)

def test_a_torch_record_behind_a_tar_link_is_critical(tmp_path: Path) -> None:
    (tmp_path / "pytorch_model.bin").write_bytes(differential.legacy_tar_storages_by_link())
    found = {(f.rule, f.severity, f.member) for f in _pickle_findings(tmp_path)}
    assert ("parser-differential", Severity.CRITICAL, "storages") in found


def test_a_plain_legacy_tar_has_no_differential(tmp_path: Path) -> None:
    (tmp_path / "pytorch_model.bin").write_bytes(readings.torch_legacy_tar())
    assert "parser-differential" not in {f.rule for f in _pickle_findings(tmp_path)}
