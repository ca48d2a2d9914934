"""Files that loaders read in more than one way, built from raw bytes at test time.

Each builder says which loader function reads the file which way (torch/serialization.py,
numpy/lib/npyio.py, zipfile). Payloads are inert strings; nothing here is ever loaded.
"""

from __future__ import annotations

import io
import json
import pickle
import struct
import tarfile
import zipfile

from tests.samples import hostile
from tests.samples import opcodes as op

# torch.serialization.StorageType maps any global whose name holds "Storage" to a dtype.
FLOAT_STORAGE = op.glob("torch", "FloatStorage")


def safetensors_read_as_pickle(payload: bool = True, length_low_byte: int = 0x56) -> bytes:
    """A valid safetensors file whose bytes, unpickled from offset 0, call posix.system.

    torch.load (transformers' loader for any ``.bin``; numpy.load's pickle fallback for a
    ``.npy``) finds no zip magic at offset 0 (``_is_zipfile``), ``tarfile.open`` fails, and
    ``_legacy_load`` unpickles from offset 0. The header length is little-endian, so its low
    byte is the first opcode: 0x56 is UNICODE, whose text argument runs to the first newline,
    swallowing the rest of the length and the JSON header (safetensors writes no newline there).
    The payload is the data of a uint8 tensor right after: newline, POP, then the call.
    """
    body = hostile.hostile_p0_body() if payload else op.proto(2) + op.EMPTY_DICT + op.STOP
    data = b"\n" + op.POP + body
    header = json.dumps({"w": {"dtype": "U8", "shape": [len(data)], "data_offsets": [0, len(data)]}}).encode()
    length = length_low_byte + 256 * (1 + len(header) // 256)  # the low byte fixed, room for the JSON
    return struct.pack("<Q", length) + header.ljust(length) + data


def safetensors_plain(length_low_byte: int, length: int | None = None) -> bytes:
    """A benign safetensors file whose header length has the given low byte (padding as needed)."""
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    length = length or length_low_byte + 256 * (1 + len(header) // 256)
    return struct.pack("<Q", length) + header.ljust(length) + b"\x00" * 8


def tar_named_by_a_pickle() -> bytes:
    """A tar whose first member's name is a pickle calling posix.system.

    tarfile opens it (its name field is just bytes before the checksum); pickle.load or
    joblib.load of the same file read the name at offset 0 as opcodes and run them.
    """
    name = (op.glob("posix", "system") + op.MARK + op.uni0(op.PAYLOAD) + op.TUPLE + op.REDUCE + op.STOP).decode()
    return _tar({name: b"benign\n"})


def pickle_then_zip() -> bytes:
    """A benign pickle at offset 0, then a zip whose deflated archive/data.pkl calls posix.system.

    torch.load checks the zip magic at offset 0 only (``_is_zipfile``) and unpickles the
    benign part; zipfile (and every tool built on it) finds the end record at the end and
    opens the zip, adjusting its offsets for the bytes in front.
    """
    inner = op.zip_bytes({"archive/data.pkl": op.system_call()}, zipfile.ZIP_DEFLATED)
    return pickle.dumps({"a": 1}, protocol=2) + inner


def pickle_then_benign_zip() -> bytes:
    return pickle.dumps({"a": 1}, protocol=2) + op.zip_bytes({"notes.txt": b"hello\n"})


def torch_legacy_tar(hostile_in: str | None = None, v7: bool = False) -> bytes:
    """torch's legacy tar checkpoint (``_legacy_load.legacy_load``) with two storages and two tensors.

    ``hostile_in`` puts a posix.system call into one record pickle: "storage" (the second
    storage's arguments, after the first storage's raw bytes), "views" (the storage-views
    pickle after both), "tensor" (the second tensor's arguments, after the first tensor's
    header) or "pickle" (the object pickle). ``v7`` drops the ustar magic from the first header:
    tarfile (so torch) still opens it, since it checks only the header checksum.
    """
    call = op.call(op.glob("posix", "system"), op.uni(op.PAYLOAD))
    storages = _count(2) + _storage_args("0", call if hostile_in == "storage-first" else None)
    storages += struct.pack("<q", 4) + b"\xff" * 16  # element count, then raw floats
    storages += _storage_args("1", call if hostile_in == "storage" else None)
    storages += struct.pack("<q", 2) + b"\x00\x00\x80\x3f" * 2
    storages += op.proto(2) + (call if hostile_in == "views" else op.EMPTY_LIST) + op.STOP
    tensors = _count(2)
    for key in ("t0", "t1"):
        first = call if hostile_in == "tensor" and key == "t1" else op.uni(key)
        tensors += op.proto(2) + op.MARK + first + op.uni("0") + op.glob("torch", "FloatTensor") + op.TUPLE + op.STOP
        tensors += struct.pack("<i", 1) + b"\x00" * 4 + struct.pack("<qqq", 4, 1, 0)
    obj = op.proto(2) + (call if hostile_in == "pickle" else op.EMPTY_DICT) + op.STOP
    data = _tar({"sys_info": pickle.dumps({"little_endian": True}, protocol=2), "pickle": obj,
                 "storages": storages, "tensors": tensors}, tarfile.PAX_FORMAT)
    return _strip_magic(data) if v7 else data


def _count(n: int) -> bytes:
    return op.proto(2) + op.binint1(n) + op.STOP


def _storage_args(key: str, key_call: bytes | None) -> bytes:
    first = key_call if key_call is not None else op.uni(key)
    return op.proto(2) + op.MARK + first + op.uni("cpu") + FLOAT_STORAGE + op.TUPLE + op.STOP


def _tar(members: dict[str, bytes], fmt: int = tarfile.USTAR_FORMAT) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _strip_magic(data: bytes) -> bytes:
    """The first header as an old V7 tar writes it: no ``ustar`` magic or version, checksum redone."""
    block = bytearray(data[:512])
    block[257:265] = b"\x00" * 8
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\x00 " % sum(block)
    return bytes(block) + data[512:]
