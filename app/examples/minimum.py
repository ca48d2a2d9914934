"""The least a vetting pass must read from each file to see everything a loader executes.

- safetensors: the u64 length + JSON header;
- PyTorch zip: end records + central directory, plus local header and data of each pickle
  member and of the `version` record;
- legacy torch: the leading pickles (magic, protocol, sys_info, state dict, storage keys);
- anything else: the whole file.

Measured by parsing the files (struct, zipfile's directory, pickletools.genops), never by
loading them.
"""

from __future__ import annotations

import json
import pickletools
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from app.core.formats.detect import HEAD_BYTES, detect_format
from app.examples.files import HUB_META

_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")  # name and extra lengths at offset 26
_LEGACY_PICKLES = 5


@dataclass(frozen=True)
class FileMinimum:
    path: str
    size: int
    minimum: int
    kind: str


def file_minimum(path: Path, rel: str) -> FileMinimum:
    size = path.stat().st_size
    with path.open("rb") as fh:
        kind = detect_format(fh.read(HEAD_BYTES), size)
        fh.seek(0)
        if kind == "safetensors":
            return FileMinimum(rel, size, 8 + struct.unpack("<Q", fh.read(8))[0], kind)
        if kind == "zip":
            return FileMinimum(rel, size, _zip_minimum(fh, size), "pytorch-zip")
        if kind == "torch-legacy":
            return FileMinimum(rel, size, _legacy_minimum(fh), kind)
    return FileMinimum(rel, size, size, kind)


def _zip_minimum(fh: BinaryIO, size: int) -> int:
    with zipfile.ZipFile(fh) as zf:
        needed: int = size - zf.start_dir  # central directory, zip64 records, EOCD
        for info in zf.infolist():
            if info.filename.endswith(".pkl") or info.filename.rsplit("/", 1)[-1] == "version":
                needed += _local_record_length(fh, info)
    return needed


def _local_record_length(fh: BinaryIO, info: zipfile.ZipInfo) -> int:
    fh.seek(info.header_offset)
    name_length, extra_length = struct.unpack_from("<HH", fh.read(_LOCAL_HEADER.size), 26)
    return _LOCAL_HEADER.size + int(name_length) + int(extra_length) + info.compress_size


def _legacy_minimum(fh: BinaryIO) -> int:
    end = 0
    for _ in range(_LEGACY_PICKLES):
        for op, _arg, pos in pickletools.genops(fh):
            if op.name == "STOP":
                end = (pos or 0) + 1
                break
    return end


def repo_minimum(repo: Path) -> list[FileMinimum]:
    files = sorted(p for p in repo.rglob("*") if p.is_file() and p.name != HUB_META)
    return [file_minimum(p, p.relative_to(repo).as_posix()) for p in files]


def minimum_report(repo_id: str, repo: Path) -> dict[str, Any]:
    files = repo_minimum(repo)
    return {
        "repo": repo_id,
        "repo_bytes": sum(f.size for f in files),
        "minimum_bytes": sum(f.minimum for f in files),
        "files": {f.path: {"size": f.size, "minimum": f.minimum, "kind": f.kind} for f in files},
    }


def write_minimum(repo_id: str, repo: Path, out: Path) -> dict[str, Any]:
    report = minimum_report(repo_id, repo)
    out.write_text(json.dumps(report, indent=2) + "\n")
    return report
