"""torch.save's two layouts, written without torch (read from torch/serialization.py).

- zip (torch >= 1.6, the default): ``<stem>/data.pkl`` is the object pickled at protocol 2 with
  storages as persistent ids ``("storage", <storage type>, key, location, numel)``, each storage's
  raw bytes in ``<stem>/data/<key>``, plus ``version``, ``byteorder`` and ``.data/serialization_id``.
  The top folder is the file name's stem, as PyTorchFileWriter names it.
- legacy (``_legacy_save``): five things back to back in one file: the magic-number pickle, the
  protocol-version pickle, the sys_info pickle, the object pickle with 6-tuple persistent ids
  (``view_metadata`` last), the pickle of the sorted storage keys, then each storage as an
  8-byte little-endian element count followed by its raw bytes.

Tensors reduce to ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
backward_hooks)``; parameters wrap that in ``_rebuild_parameter(data, requires_grad, hooks)``.
Dtypes newer than the legacy storage classes (float8, uint16...; ``torch.storage._new_dtypes``)
are saved as a ``torch.storage.UntypedStorage`` and rebuilt by ``_rebuild_tensor_v3(...,
backward_hooks, dtype)`` with the dtype pickled by name (``torch.float8_e4m3fn``).
"""

from __future__ import annotations

import collections
import io
import pickle
import struct
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tests.corpus.stand_ins import Device, modules, stand_in

TORCH_MAGIC = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_SIZES = {"FloatStorage": 4, "HalfStorage": 2, "BFloat16Storage": 2, "LongStorage": 8, "ByteStorage": 1,
          "float8_e4m3fn": 1, "float8_e5m2": 1}
STORAGES = {name: stand_in("torch", name) for name in _SIZES if name.endswith("Storage")}
UntypedStorage = stand_in("torch.storage", "UntypedStorage")


class _DType:
    """A torch.dtype: pickled by name as the global ``torch.<name>``."""

    def __init__(self, name: str) -> None:
        self.__module__, self.__qualname__ = "torch", name

    def __reduce__(self) -> str:
        return self.__qualname__


DTYPES = {name: _DType(name) for name in _SIZES if not name.endswith("Storage")}


def _rebuild_tensor_v2(*args: Any) -> None: ...
def _rebuild_tensor_v3(*args: Any) -> None: ...
def _rebuild_parameter(*args: Any) -> None: ...


for _fn in (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter):
    _fn.__module__ = "torch._utils"


class Size(tuple[int, ...]):
    """torch.Size pickles as ``torch.Size((dims...))``."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (Size, (tuple(self),))


Size.__module__, Size.__qualname__ = "torch", "Size"
_GLOBALS = (*STORAGES.values(), UntypedStorage, *DTYPES.values(), _rebuild_tensor_v2, _rebuild_tensor_v3,
            _rebuild_parameter, Device, Size)


@dataclass(eq=False)
class Tensor:
    shape: tuple[int, ...]
    storage: str = "FloatStorage"  # a legacy storage class name, or a new dtype's name
    parameter: bool = False
    key: str = ""  # filled in when the writer meets it
    fill: int = 0

    @property
    def numel(self) -> int:
        n = 1
        for dim in self.shape:
            n *= dim
        return n

    def raw(self) -> bytes:
        return bytes([self.fill]) * (self.numel * _SIZES[self.storage])


@dataclass(eq=False)
class _Storage:
    tensor: Tensor


@dataclass
class _Writer:
    legacy: bool
    storages: dict[str, bytes] = field(default_factory=dict)
    numels: dict[str, int] = field(default_factory=dict)

    def dumps(self, obj: Any) -> bytes:
        out = io.BytesIO()
        pickler = _Pickler(out, self)
        with modules(*_GLOBALS):
            pickler.dump(obj)
        return out.getvalue()


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, writer: _Writer) -> None:
        super().__init__(file, protocol=2)  # torch.save's DEFAULT_PROTOCOL
        self.writer = writer

    def persistent_id(self, obj: Any) -> Any:
        if not isinstance(obj, _Storage):
            return None
        tensor = obj.tensor
        if not tensor.key:
            tensor.key = str(len(self.writer.storages))
            self.writer.storages[tensor.key] = tensor.raw()
            self.writer.numels[tensor.key] = tensor.numel
        kind = STORAGES.get(tensor.storage, UntypedStorage)  # new dtypes: untyped, numel in bytes
        pid = ("storage", kind, tensor.key, "cpu", len(tensor.raw()) if kind is UntypedStorage else tensor.numel)
        return (*pid, None) if self.writer.legacy else pid

    def reducer_override(self, obj: Any) -> Any:
        if not isinstance(obj, Tensor):
            return NotImplemented
        stride = tuple(_stride(obj.shape))
        # _reduce_ex_internal: (storage, offset, tuple(size), stride, requires_grad, hooks)
        args: tuple[Any, ...] = (_Storage(obj), 0, tuple(obj.shape), stride, False, collections.OrderedDict())
        if obj.storage in DTYPES:
            return (_rebuild_tensor_v3, (*args, DTYPES[obj.storage]))
        if obj.parameter:
            return (_rebuild_parameter, (_Rebuilt((_rebuild_tensor_v2, args)), True, collections.OrderedDict()))
        return (_rebuild_tensor_v2, args)


class _Rebuilt:
    def __init__(self, reduce_value: tuple[Any, ...]) -> None:
        self.reduce_value = reduce_value

    def __reduce__(self) -> tuple[Any, ...]:
        return self.reduce_value


def _stride(shape: tuple[int, ...]) -> Iterable[int]:
    for i in range(len(shape)):
        n = 1
        for dim in shape[i + 1 :]:
            n *= dim
        yield n


def save_zip(obj: Any, stem: str) -> bytes:
    writer = _Writer(legacy=False)
    data_pkl = writer.dumps(obj)
    members = {f"{stem}/data.pkl": data_pkl, f"{stem}/byteorder": b"little"}
    members.update({f"{stem}/data/{key}": raw for key, raw in writer.storages.items()})
    members.update({f"{stem}/version": b"3\n", f"{stem}/.data/serialization_id": b"0123456789012345678901"})
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def save_legacy(obj: Any) -> bytes:
    writer = _Writer(legacy=True)
    sys_info = {"protocol_version": PROTOCOL_VERSION, "little_endian": True,
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    parts = [pickle.dumps(TORCH_MAGIC, protocol=2), pickle.dumps(PROTOCOL_VERSION, protocol=2),
             pickle.dumps(sys_info, protocol=2), writer.dumps(obj)]
    keys = sorted(writer.storages)  # torch sorts the keys as strings
    parts.append(pickle.dumps(keys, protocol=2))
    for key in keys:  # _write_file: the element count, then the raw bytes
        parts.append(struct.pack("<q", writer.numels[key]) + writer.storages[key])
    return b"".join(parts)
