"""Sample builders for the peer-engine tests: raw opcodes and hand-made containers.

Nothing here is ever loaded. Payload strings are inert ("echo pwned"). Also the vet helper
the peer-engine and Keras tests share.
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.core.findings import Severity
from app.core.limits import Limits
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners.base import Scanner
from app.sources.local import LocalSource

TORCH_MAGIC = 0x1950A86A20F9469CFC6C
PAYLOAD = "echo pwned"


def vet_with(scanner: Scanner, path: Path, limits: Limits | None = None) -> Report:
    """Vet with one scanner; every finding is one of its declared rules (or the pipeline's)."""
    report = vet(LocalSource(path), [scanner], options=VetOptions(limits=limits))
    assert {f.rule for f in report.findings} <= {r.id for r in scanner.rules} | {"unscanned"}
    assert all(f.scanner in (scanner.name, "pipeline") for f in report.findings)
    return report


def rules_at(report: Report, path: str) -> list[tuple[str, Severity, str | None]]:
    return sorted((f.rule, f.severity, f.member) for f in report.findings if f.path == path)


def _unicode(text: str) -> bytes:
    raw = text.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw  # BINUNICODE


def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"  # GLOBAL


def reduce_call(module: str = "posix", name: str = "system", arg: str = PAYLOAD) -> bytes:
    """A protocol-2 pickle that calls module.name(arg) on load."""
    return b"\x80\x02" + _global(module, name) + _unicode(arg) + b"\x85R."


def broken_after_payload() -> bytes:
    """The call happens before the stream turns invalid (nullifAI style)."""
    return b"\x80\x02" + _global("posix", "system") + _unicode(PAYLOAD) + b"\x85R" + b"\xff\xfe"


def joblib_with_array(after: bytes = b"") -> bytes:
    """joblib's layout: raw array bytes right after the wrapper's BUILD, then more opcodes."""
    wrapper = _global("joblib.numpy_pickle", "NumpyArrayWrapper") + b")\x81}" + _unicode("shape") + b"K\x02\x85sb"
    raw_float32 = b"\xff\xff\x7f\x7f" * 2  # bytes no opcode walker can parse
    return b"\x80\x02" + wrapper + raw_float32 + after + b"."


def _tensor(storage_key: str, rebuild: str = "_rebuild_tensor_v2") -> bytes:
    storage = (b"(" + _unicode("storage") + _global("torch", "FloatStorage") + _unicode(storage_key)
               + _unicode("cpu") + b"K\x04t" + b"Q")  # MARK ... TUPLE, BINPERSID
    args = storage + b"K\x00" + b"K\x02K\x02\x86" + b"K\x02K\x01\x86" + b"\x89"  # offset, size, stride, False
    hooks = _global("collections", "OrderedDict") + b")R"
    tensor = _global("torch._utils", "_rebuild_tensor_v2") + b"(" + args + hooks + b"tR"
    if rebuild == "_rebuild_parameter":
        return _global("torch._utils", "_rebuild_parameter") + b"(" + tensor + b"\x88" + hooks + b"tR"
    return tensor


def torch_data_pkl(parameter: bool = False) -> bytes:
    """What torch.save writes as data.pkl for {"weight": tensor}, written by hand (no torch)."""
    rebuild = "_rebuild_parameter" if parameter else "_rebuild_tensor_v2"
    state = _global("collections", "OrderedDict") + b")R" + _unicode("weight") + _tensor("0", rebuild) + b"s"
    return b"\x80\x02" + state + b"."


def write_zip(path: Path, members: dict[str, bytes], compress: bool = False) -> Path:
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def torch_zip(path: Path, data_pkl: bytes | None = None) -> Path:
    return write_zip(path, {
        "archive/data.pkl": data_pkl if data_pkl is not None else torch_data_pkl(),
        "archive/byteorder": b"little",
        "archive/data/0": b"\x00" * 16,
        "archive/version": b"3\n",
    })


def sparse_torch_zip(path: Path, big: int) -> Path:
    """A torch-style zip with a ``big``-byte STORED storage member that is never written."""
    return sparse_zip(path, {"archive/data.pkl": torch_data_pkl(), "archive/data/0": big,
                             "archive/version": b"3\n"})


def sparse_zip(path: Path, members: dict[str, bytes | int]) -> Path:
    """A STORED zip; an int member is that many zeros left as a hole in a sparse file.

    The test stays fast and uses no disk however big the member is (below 4 GiB).
    """
    with path.open("wb") as fh:
        central = []
        for name, data in members.items():
            if isinstance(data, int):
                central.append(_stored(fh, name, None, _zeros_crc(data), data))
            else:
                central.append(_stored(fh, name, data, zlib.crc32(data), len(data)))
        cd_offset = fh.tell()
        for record in central:
            fh.write(record)
        cd_size = fh.tell() - cd_offset
        count = len(central)
        fh.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, cd_size, cd_offset, 0))
    return path


def _stored(fh: object, name: str, data: bytes | None, crc: int, size: int) -> bytes:
    assert hasattr(fh, "tell") and hasattr(fh, "write") and hasattr(fh, "seek")
    offset = fh.tell()
    raw = name.encode()
    fh.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, crc, size, size, len(raw), 0) + raw)
    if data is None:
        fh.seek(size, 1)  # leave a hole
    else:
        fh.write(data)
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0, crc, size, size,
                       len(raw), 0, 0, 0, 0, 0, offset) + raw


def _zeros_crc(size: int) -> int:
    chunk = bytes(16 * 1024 * 1024)
    crc, left = 0, size
    while left:
        step = min(left, len(chunk))
        crc = zlib.crc32(chunk[:step] if step < len(chunk) else chunk, crc)
        left -= step
    return crc


def legacy_torch(data_pickle: bytes) -> bytes:
    """Pre-1.6 torch.save layout: magic, protocol, sys_info, data pickles, storage keys, raw bytes."""
    magic = b"\x80\x02\x8a\x0a" + TORCH_MAGIC.to_bytes(10, "little") + b"."
    protocol = b"\x80\x02M\xe9\x03."
    sys_info = b"\x80\x02}q\x00(" + _unicode("little_endian") + b"\x88u."
    keys = b"\x80\x02]q\x00" + _unicode("0") + b"a."
    return magic + protocol + sys_info + data_pickle + keys + b"\x00" * 64


def npy(descr: str, shape: tuple[int, ...], payload: bytes) -> bytes:
    """A version-1.0 .npy written by hand (so object arrays need no numpy pickling)."""
    header = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode()
    pad = 64 - (10 + len(header) + 1) % 64
    header += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + payload


def sparse_npy(path: Path, count: int) -> Path:
    """A float32 .npy of ``count`` zeros whose data is a hole in a sparse file."""
    with path.open("wb") as fh:
        fh.write(npy("<f4", (count,), b""))
        fh.truncate(fh.tell() + 4 * count)
    return path


def lambda_layer(name: str) -> dict[str, object]:
    code = {"class_name": "__lambda__", "config": {"code": "4wEAAAAAAAAA", "defaults": None, "closure": None}}
    return {"module": "keras.layers", "class_name": "Lambda", "registered_name": None,
            "config": {"name": name, "function": code, "arguments": {}}}


def dense_layer(name: str) -> dict[str, object]:
    return {"module": "keras.layers", "class_name": "Dense", "registered_name": None,
            "config": {"name": name, "units": 2,
                       "activation": {"module": "keras.activations", "class_name": "function",
                                      "config": "relu", "registered_name": "relu"}}}


def sequential(name: str, layers: list[dict[str, object]]) -> dict[str, object]:
    return {"module": "keras", "class_name": "Sequential", "registered_name": None,
            "config": {"name": name, "layers": layers}}


def keras_zip(path: Path, config: dict[str, object] | bytes) -> Path:
    body = config if isinstance(config, bytes) else json.dumps(config).encode()
    return write_zip(path, {
        "metadata.json": b'{"keras_version": "3.6.0"}',
        "config.json": body,
        "model.weights.h5": b"\x89HDF\r\n\x1a\n" + b"\x00" * 32,
    }, compress=True)


def h5_model(path: Path, config: dict[str, Any] | None) -> None:
    """An HDF5 file with one dataset and, if given, a Keras ``model_config`` attribute."""
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "w") as h5:
        h5.create_dataset("w", data=np.ones(4))
        if config is not None:
            h5.attrs["model_config"] = json.dumps(config)
