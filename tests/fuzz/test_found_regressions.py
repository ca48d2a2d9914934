"""What the fuzz targets found, each pinned by the smallest input that showed it."""

from __future__ import annotations

import io
import struct
import tarfile
import zlib
from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.policy.errors import PolicyError
from app.core.policy.loader import load_policy
from app.core.scanners.base import Scanner
from app.core.scanners.binary_scanner import BinaryScanner
from app.core.scanners.pickle_scanner import PickleScanner
from app.core.verdict import Verdict
from tests.fuzz import harness as h
from tests.samples import hostile


def test_a_control_character_in_a_policy_is_a_policy_error(tmp_path: Path) -> None:
    """PyYAML's reader refuses control characters when the loader is built; that was outside the try."""
    path = tmp_path / "policy.yaml"
    path.write_text("name: x\x1a\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="invalid YAML"):
        load_policy(path)


@pytest.mark.parametrize("value", ["2999-12-32", "2026-02-30", "0000-01-01"])
def test_an_impossible_date_in_a_policy_is_a_policy_error(tmp_path: Path, value: str) -> None:
    """PyYAML resolves it as a timestamp, then datetime raises ValueError: found by bench/fuzz_long.py."""
    path = tmp_path / "policy.yaml"
    path.write_text(f"name: x\nwaivers:\n  - expires: {value}\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="invalid YAML value"):
        load_policy(path)


def _pax_tar(name: str, pax: dict[str, str], data: bytes) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        info = tarfile.TarInfo(name)
        info.size, info.pax_headers = len(data), pax
        archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


@pytest.mark.parametrize("pax", [{"GNU.sparse.name": "../../.bashrc"},
                                 {"path": "ok/b.txt", "GNU.sparse.name": "../../.bashrc"}])
def test_a_pax_sparse_name_is_the_name_tarfile_extracts(pax: dict[str, str]) -> None:
    """tarfile names the member after GNU.sparse.name (last pax record wins); it was not checked."""
    raw = _pax_tar("ok/a.txt", pax, b"hello\n")
    with tarfile.open(fileobj=io.BytesIO(raw)) as archive:
        assert archive.getnames() == ["../../.bashrc"]  # what an extracting loader would write
    verdict, findings = h.vet_files({"c.tar": raw}, [BinaryScanner()])
    assert ("archive-unsafe-name", Severity.HIGH) in {(f.rule, f.severity) for f in findings}
    assert verdict is Verdict.REJECT


def _sevenzip_with_header_id(pid: int) -> bytes:
    """A valid 7z whose next-header block starts with property id ``pid``, both CRCs fixed up."""
    raw = bytearray(hostile.sevenzip(hostile.by_protocol(4), "model.pkl"))
    offset, size = struct.unpack_from("<QQ", raw, 12)
    raw[32 + offset] = pid
    struct.pack_into("<I", raw, 28, zlib.crc32(raw[32 + offset : 32 + offset + size]))
    struct.pack_into("<I", raw, 8, zlib.crc32(raw[12:32]))
    return bytes(raw)


@pytest.mark.parametrize("scanner", [PickleScanner(), BinaryScanner()], ids=lambda s: s.name)
def test_an_unknown_7z_header_field_is_a_finding(scanner: Scanner) -> None:
    """py7zr raises TypeError("Unknown field") for it; that escaped the scanners (found by fuzz_long)."""
    outcome = h.scan_direct(scanner, "weights.7z", _sevenzip_with_header_id(0x09))
    assert outcome is not None
    assert h.worst(outcome.findings).rank >= Severity.HIGH.rank
