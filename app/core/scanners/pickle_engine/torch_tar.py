"""The ``storages`` and ``tensors`` members of torch's legacy tar checkpoints, read as torch reads them.

``torch.serialization._legacy_load`` first tries ``tarfile.open`` on a file that is not a zip;
inside the tar, ``legacy_load`` unpickles ``storages`` and ``tensors`` record by record:

- ``storages``: a count pickle, then per storage a pickle of ``(key, location, storage_type)``
  followed by raw bytes (an int64 element count, then count x element size bytes, read by
  ``UntypedStorage._new_with_file``), then one pickle of storage views;
- ``tensors``: a count pickle, then per tensor a pickle of ``(key, storage_id, type)`` followed by
  an int32 ndim, 4 padding bytes, ndim int64 sizes, ndim int64 strides and an int64 offset.

Read as stacked pickles these records stop at the first raw bytes, and every later record
pickle (each one unpickled by torch) would go unvetted. Here each record pickle is walked and
the raw bytes after it are skipped by their declared sizes.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import BinaryIO

from app.core.formats.streams import CorruptStream
from app.core.limits import LimitExceeded
from app.core.scanners.pickle_engine.values import Const, GlobalRef, TupleVal, Value

STORAGES = "storages"
TENSORS = "tensors"
MAX_NDIM = 1024  # far beyond any real tensor; a larger figure is no torch checkpoint
_SKIP_CHUNK = 1 << 20
# Element sizes of the legacy storage classes (torch.storage._get_dtype_from_pickle_storage_type):
# torch's find_class maps any global whose name contains "Storage" to one of these.
ELEMENT_SIZES = {
    "DoubleStorage": 8, "FloatStorage": 4, "HalfStorage": 2, "BFloat16Storage": 2, "LongStorage": 8,
    "IntStorage": 4, "ShortStorage": 2, "CharStorage": 1, "ByteStorage": 1, "BoolStorage": 1,
    "ComplexDoubleStorage": 16, "ComplexFloatStorage": 8, "QInt8Storage": 1, "QUInt8Storage": 1,
    "QInt32Storage": 4, "QUInt4x2Storage": 1, "QUInt2x4Storage": 1,
}

# Walks one pickle of the stream (its imports, calls...) and returns the value it returns; raises
# RecordsEnd when that pickle's walk ended early (broken, a limit), which it has reported itself.
OnePickle = Callable[[BinaryIO], "Value | None"]


class RecordsEnd(Exception):
    """A record pickle could not be walked to its STOP: the loader fails there too."""


# Every member legacy_load reads by name: tar.extract/extractfile follow a link to another member.
READ_BY_NAME = ("sys_info", "pickle", STORAGES, TENSORS)


def read_by_name(member_name: str) -> bool:
    return posixpath.normpath(member_name) in READ_BY_NAME


def record_kind(member_name: str) -> str | None:
    """``storages`` or ``tensors`` when torch's ``tar.extract`` would pick this member."""
    name = posixpath.normpath(member_name)
    return name if name in (STORAGES, TENSORS) else None


def walk_records(stream: BinaryIO, kind: str, one_pickle: OnePickle, max_records: int) -> None:
    try:
        _walk(stream, kind, one_pickle, max_records)
    except RecordsEnd:
        return


def _walk(stream: BinaryIO, kind: str, one_pickle: OnePickle, max_records: int) -> None:
    count = _count(one_pickle(stream), kind)
    if count > max_records:
        raise LimitExceeded(f"{kind}: {count} records declared, over {max_records}")
    for _ in range(count):  # a count past the member's end breaks the next pickle: reported as broken
        args = one_pickle(stream)
        if kind == STORAGES:
            _skip(stream, _element_count(stream) * _element_size(args), "storage bytes")
        else:
            _skip_tensor_header(stream)
    if kind == STORAGES:
        one_pickle(stream)  # the storage views: unpickled too


def _count(value: Value | None, kind: str) -> int:
    if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
        return max(0, value.value)
    raise CorruptStream(f"{kind}: the record count is not a number, so the records cannot be told apart")


def _element_size(args: Value | None) -> int:
    storage_type = args.items[2] if isinstance(args, TupleVal) and len(args.items) == 3 else None
    if isinstance(storage_type, GlobalRef):
        for name, size in ELEMENT_SIZES.items():
            if name in storage_type.name:
                return size
    raise CorruptStream("storages: a record whose storage type is not a torch storage class cannot be sized")


def _element_count(stream: BinaryIO) -> int:
    count = int.from_bytes(_read(stream, 8, "storage element count"), "little", signed=True)
    if count < 0:
        raise CorruptStream("storages: negative element count")
    return count


def _skip_tensor_header(stream: BinaryIO) -> None:
    ndim = int.from_bytes(_read(stream, 4, "tensor ndim"), "little", signed=True)
    if not 0 <= ndim <= MAX_NDIM:
        raise CorruptStream(f"tensors: ndim {ndim} out of range")
    _skip(stream, 4 + 16 * ndim + 8, "tensor header")


def _read(stream: BinaryIO, n: int, what: str) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise CorruptStream(f"truncated {what}")
    return data


def _skip(stream: BinaryIO, n: int, what: str) -> None:
    while n > 0:
        got = len(stream.read(min(n, _SKIP_CHUNK)))
        if got == 0:
            raise CorruptStream(f"truncated {what}")
        n -= got
