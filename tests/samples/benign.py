"""Benign samples shaped like ordinary checkpoints, written without torch or joblib.

torch globals are produced by the real ``pickle.Pickler`` against stand-in modules
(``torch``, ``torch._utils``) registered only while a sample is being written.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import pickle
import struct
import sys
import types
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tests.samples import opcodes as op


@dataclass(frozen=True)
class Sample:
    name: str
    filename: str
    build: Callable[[], bytes]

    def write(self, folder: Path) -> Path:
        return op.write(folder / self.filename, self.build())


class _Storage:
    def __init__(self, key: str, kind: type, numel: int) -> None:
        self.key, self.kind, self.numel = key, kind, numel


class _Tensor:
    def __init__(self, storage: _Storage, size: tuple[int, ...], parameter: bool = False) -> None:
        self.storage, self.size, self.parameter = storage, size, parameter


def _named(module: types.ModuleType, name: str, obj: Any) -> Any:
    obj.__module__ = module.__name__
    obj.__qualname__ = obj.__name__ = name
    setattr(module, name, obj)
    return obj


@contextlib.contextmanager
def fake_torch() -> Iterator[types.ModuleType]:
    """Stand-in ``torch`` modules so the real Pickler can name torch globals."""
    torch, utils = types.ModuleType("torch"), types.ModuleType("torch._utils")
    torch._utils = utils  # type: ignore[attr-defined]
    for name in ("FloatStorage", "BFloat16Storage", "HalfStorage", "LongStorage"):
        _named(torch, name, type(name, (), {}))
    _named(utils, "_rebuild_tensor_v2", lambda *a: None)
    _named(utils, "_rebuild_parameter", lambda *a: None)
    device = _named(torch, "device", type("device", (), {"__init__": lambda s, t: setattr(s, "t", t)}))
    device.__reduce__ = lambda s: (device, (s.t,))
    size = _named(torch, "Size", type("Size", (tuple,), {}))
    size.__reduce__ = lambda s: (size, (tuple(s),))
    dtype = type("dtype", (), {"__reduce__": lambda s: s.name})
    dtype.__module__ = "torch"
    for name in ("float32", "bfloat16", "float16"):
        instance = dtype()
        instance.name = name
        setattr(torch, name, instance)
    saved = {k: sys.modules.get(k) for k in ("torch", "torch._utils")}
    sys.modules.update({"torch": torch, "torch._utils": utils})
    try:
        yield torch
    finally:
        for key, value in saved.items():
            if value is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = value


class _TorchPickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, torch: types.ModuleType, protocol: int) -> None:
        super().__init__(file, protocol=protocol)
        self.torch = torch

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _Storage):
            return ("storage", obj.kind, obj.key, "cpu", obj.numel)
        return None

    def reducer_override(self, obj: Any) -> Any:
        if not isinstance(obj, _Tensor):
            return NotImplemented
        utils = self.torch._utils
        stride = tuple(int(np.prod(obj.size[i + 1 :])) for i in range(len(obj.size)))
        tensor = (utils._rebuild_tensor_v2, (obj.storage, 0, obj.size, stride, False, collections.OrderedDict()))
        if obj.parameter:
            return (utils._rebuild_parameter, (_Rebuilt(tensor), True, collections.OrderedDict()))
        return tensor


class _Rebuilt:
    def __init__(self, reduce_value: tuple[Any, ...]) -> None:
        self.reduce_value = reduce_value

    def __reduce__(self) -> tuple[Any, ...]:
        return self.reduce_value


def _state_dict(torch: types.ModuleType) -> tuple[Any, dict[str, bytes]]:
    weight = _Tensor(_Storage("0", torch.FloatStorage, 6), (2, 3))
    bias = _Tensor(_Storage("1", torch.BFloat16Storage, 2), (2,), parameter=True)
    state = collections.OrderedDict([("layer.weight", weight), ("layer.bias", bias)])
    state._metadata = collections.OrderedDict([("", {"version": 1})])  # type: ignore[attr-defined]
    checkpoint = {
        "model": state, "epoch": 3, "best": 0.25, "args": argparse.Namespace(lr=0.1, name="run"),
        "device": torch.device("cpu"), "dtype": torch.bfloat16, "shape": torch.Size([2, 3]),
        "optimizer": {"state": {0: {"step": 10}}, "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999)}]},
    }
    return checkpoint, {"0": b"\x00" * 24, "1": b"\xff" * 4}


def torch_pickle(protocol: int = 2) -> tuple[bytes, dict[str, bytes]]:
    with fake_torch() as torch:
        obj, storages = _state_dict(torch)
        out = io.BytesIO()
        _TorchPickler(out, torch, protocol).dump(obj)
    return out.getvalue(), storages


def torch_zip(top: str = "archive", protocol: int = 2, deflate: bool = False) -> bytes:
    data_pkl, storages = torch_pickle(protocol)
    members = {f"{top}/data.pkl": data_pkl, f"{top}/byteorder": b"little", f"{top}/version": b"3\n",
               f"{top}/.data/serialization_id": b"1234567890"}
    members.update({f"{top}/data/{key}": raw for key, raw in storages.items()})
    return op.zip_bytes(members, op.zipfile.ZIP_DEFLATED if deflate else op.zipfile.ZIP_STORED)


def torch_legacy() -> bytes:
    data_pkl, storages = torch_pickle(2)
    sys_info = {"protocol_version": 1001, "little_endian": True, "type_sizes": {"short": 2, "int": 4, "long": 4}}
    parts = [pickle.dumps(op.TORCH_MAGIC, protocol=2), pickle.dumps(1001, protocol=2),
             pickle.dumps(sys_info, protocol=2), data_pkl, pickle.dumps(sorted(storages), protocol=2)]
    for key in sorted(storages):  # raw storage bytes: never a pickle, never read by the scanner
        parts.append(struct.pack("<q", len(storages[key])) + storages[key] + b"\xff\xfe" * 64)
    return b"".join(parts)


def npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=False)
    return out.getvalue()


def npz(compressed: bool) -> bytes:
    out = io.BytesIO()
    arrays = {"a": np.arange(12, dtype="f4").reshape(3, 4), "b": np.array(["x", "yz"])}
    (np.savez_compressed if compressed else np.savez)(out, **arrays)
    return out.getvalue()


def joblib_like(compress: str | None = None) -> bytes:
    """What joblib.dump writes for {'w': float64 array}: array bytes inside the pickle stream."""
    dtype = op.call(op.glob("numpy", "dtype"), op.short_uni("f8"), op.NEWFALSE, op.NEWTRUE)
    dtype += op.MARK + op.binint1(3) + op.short_uni("<") + op.NONE * 3 + op.binint(-1) * 2 + op.binint1(0)
    dtype += op.TUPLE + op.BUILD
    state = (op.EMPTY_DICT + op.MARK + op.short_uni("subclass") + op.glob("numpy", "ndarray")
             + op.short_uni("shape") + op.binint1(2) + op.binint1(3) + op.TUPLE2
             + op.short_uni("order") + op.short_uni("C") + op.short_uni("dtype") + dtype
             + op.short_uni("allow_mmap") + op.NEWTRUE
             + op.short_uni("numpy_array_alignment_bytes") + op.binint1(16) + op.SETITEMS)
    wrapper = op.glob("joblib.numpy_pickle", "NumpyArrayWrapper") + op.EMPTY_TUPLE + op.NEWOBJ + state + op.BUILD
    array = b"\x07" + b"\xff" * 7 + np.arange(6, dtype="f8").tobytes()  # padding, then data
    body = (op.proto(4) + op.EMPTY_DICT + op.MARK + op.short_uni("w") + wrapper + array
            + op.short_uni("n") + op.binint1(5) + op.SETITEMS + op.STOP)
    if compress == "zlib":
        return zlib.compress(body, 3)
    if compress == "gzip":
        import gzip

        return gzip.compress(body)
    return body


def _safetensors() -> bytes:
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    return struct.pack("<Q", len(header)) + header + b"\x00" * 8


def _plain(protocol: int) -> Callable[[], bytes]:
    value = {"a": [1, 2.5, "x", b"raw", None, True], "t": (1, (2, 3)), "s": {1, 2}, "f": frozenset({3}),
             "n": collections.OrderedDict(k=1), "ba": bytearray(b"q"), "c": 1 + 2j, "big": 1 << 70}
    return lambda: pickle.dumps(value, protocol=protocol)


SAMPLES: tuple[Sample, ...] = (
    *(Sample(f"plain-p{p}", f"plain_p{p}.pkl", _plain(p)) for p in range(6)),
    *(Sample(f"ndarray-p{p}", f"array_p{p}.pkl",
             lambda p=p: pickle.dumps({"x": np.arange(5, dtype="f4"), "s": np.float64(1.5)}, protocol=p))
      for p in range(6)),
    *(Sample(f"torch-zip-{top}", f"pytorch_model_{top}.bin", lambda top=top: torch_zip(top))
      for top in ("archive", "pytorch_model", "model-00001", "checkpoint")),
    Sample("torch-zip-protocol4", "model_p4.pt", lambda: torch_zip("archive", protocol=4)),
    Sample("torch-zip-deflated", "model_deflated.pt", lambda: torch_zip("archive", deflate=True)),
    Sample("torch-legacy", "legacy.bin", torch_legacy),
    Sample("torch-raw-pickle", "state.pth", lambda: torch_pickle(2)[0]),
    Sample("npy-float", "weights.npy", lambda: npy(np.arange(10, dtype="f8"))),
    Sample("npy-structured", "table.npy", lambda: npy(np.zeros(3, dtype=[("Obj", "f4"), ("b", "i8")]))),
    Sample("npz", "arrays.npz", lambda: npz(False)),
    Sample("npz-compressed", "arrays_c.npz", lambda: npz(True)),
    Sample("joblib-raw", "model.joblib", joblib_like),
    Sample("joblib-zlib", "model_z.joblib", lambda: joblib_like("zlib")),
    Sample("joblib-gzip", "model_g.joblib", lambda: joblib_like("gzip")),
    Sample("safetensors", "model.safetensors", _safetensors),
    Sample("text", "README.md", lambda: b"# model\n\nx^2 + y^2, see https://example.org\n"),
    Sample("text-zlib-lookalike", "notes.txt", lambda: b"x^2 is not zlib\n"),
    *(Sample(f"text-{i}", f"text_{i}.txt", lambda t=t: t) for i, t in enumerate(
        (b"N.B. this model is experimental.\n", b"I think this works\n" * 50, b"Version " + b"v" * 5000 + b"\n",
         b"cat data.txt | head\nls -la\n", b"(note) see the docs\n", b"]]]\n"))),
    Sample("unknown-binary", "blob.dat", lambda: bytes(range(256)) * 64),
    Sample("json", "config.json", lambda: b'{"architectures": ["Llama"], "torch_dtype": "bfloat16"}'),
)
