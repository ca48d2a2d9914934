"""Hard-benign shapes found in the wild (issue 22, bench/wild_corpus.py): files packages on PyPI ship.

Each is rebuilt byte for byte the way its library writes it, from inert values, and must be
approved for a vendor-official repo: llama.cpp's vocab-only GGUFs, numpy's Python 2 era `.npy`
files, joblib < 0.10 pickles with their side files. Nothing here is ever loaded.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

from gguf import GGUFValueType

from tests.corpus.registry import Case, register_all
from tests.samples import opcodes as op

FAMILY = "wild-shapes"
_SCALAR_CODES = {GGUFValueType.UINT8: "B", GGUFValueType.INT8: "b", GGUFValueType.UINT16: "H",
                 GGUFValueType.INT16: "h", GGUFValueType.UINT32: "I", GGUFValueType.INT32: "i",
                 GGUFValueType.UINT64: "Q", GGUFValueType.INT64: "q"}


# -- GGUF (layout: gguf-py GGUFWriter / llama.cpp gguf.cpp) ------------------------------------------


def _s(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def kv_string(key: str, value: str) -> bytes:
    return _s(key) + struct.pack("<I", GGUFValueType.STRING) + _s(value)


def kv_scalar(key: str, vtype: GGUFValueType, value: int) -> bytes:
    return _s(key) + struct.pack("<I", vtype) + struct.pack("<" + _SCALAR_CODES[vtype], value)


def kv_tokens(tokens: Sequence[str]) -> bytes:
    items = b"".join(_s(t) for t in tokens)
    return _s("tokenizer.ggml.tokens") + struct.pack("<IIQ", GGUFValueType.ARRAY, GGUFValueType.STRING,
                                                     len(tokens)) + items


def tensor_info(name: str, dims: list[int], ggml_type: int = 0, offset: int = 0) -> bytes:
    shape = b"".join(struct.pack("<Q", d) for d in dims)
    return _s(name) + struct.pack("<I", len(dims)) + shape + struct.pack("<IQ", ggml_type, offset)


def gguf_file(kvs: Sequence[bytes], tensors: Sequence[bytes] = (), *, data: int = 0, alignment: int = 32,
              pad: bool = True) -> bytes:
    """A v3 GGUF; ``pad=False`` ends it right after the header (no data section), as old writers did."""
    body = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs) + b"".join(tensors)
    if not pad:
        return body
    return body + bytes(-len(body) % alignment) + bytes(data)


def vocab_only_gguf() -> bytes:
    """llama.cpp's models/ggml-vocab-*.gguf: tokenizer metadata, zero tensors, the file ends after the
    token arrays, short of the 32-byte boundary where a data section would start."""
    tokens = ["<unk>", "<s>", "</s>", *(f"tok{i}" for i in range(61))]
    kvs = [kv_string("general.architecture", "llama"), kv_string("general.name", "LLaMA v2"),
           kv_scalar("llama.vocab_size", GGUFValueType.UINT32, len(tokens)),
           kv_string("tokenizer.ggml.model", "llama"), kv_tokens(tokens),
           kv_scalar("tokenizer.ggml.bos_token_id", GGUFValueType.UINT32, 1)]
    data = gguf_file(kvs, pad=False)
    if len(data) % 32 == 0:  # keep the shape that matters: unpadded, the aligned offset past the end
        data = gguf_file([*kvs, kv_string("general.x", "y")], pad=False)
    return data


register_all([
    Case(FAMILY, "gguf-vocab-only", "benign", lambda: {"ggml-vocab-llama-spm.gguf": vocab_only_gguf(),
                                                       "ggml-vocab-gpt-2.gguf": vocab_only_gguf()},
         why="llama.cpp's vocab-only GGUFs (0 tensors, no padding): llama.cpp loads them with vocab_only",
         vendor="approve"),
])


# -- numpy .npy written by Python 2 (numpy/lib/format.py, write_array_header_1_0 under Python 2) -------


def npy_bytes(header: str, *, version: tuple[int, int] = (1, 0), body: bytes = b"", align: int = 64) -> bytes:
    """A .npy file with this header text, padded with spaces and a newline as numpy pads (to 16 before 1.14)."""
    size = 2 if version[0] == 1 else 4
    text = header.encode("latin-1")
    text += b" " * (-(6 + 2 + size + len(text) + 1) % align) + b"\n"
    return b"\x93NUMPY" + bytes(version) + len(text).to_bytes(size, "little") + text + body


def win64python2_npy() -> bytes:
    """numpy/lib/tests/data/win64python2.npy: two float64 ones under a `(2L,)` shape."""
    return npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2L,), }",
                     body=struct.pack("<2d", 1.0, 1.0), align=16)


register_all([
    Case(FAMILY, "npy-python2-long-shape", "benign", lambda: {"embeddings.npy": win64python2_npy()},
         why="a .npy header written by Python 2 (`(2L,)`): numpy reads it after dropping the L", vendor="approve"),
])


# -- joblib < 0.10 (joblib/numpy_pickle_compat.py): wrappers naming side files ---------------------------


def _sbs(text: str) -> bytes:  # SHORT_BINSTRING, as Python 2 pickled str keys
    return b"U" + bytes([len(text)]) + text.encode()


def nd_array_wrapper(filename: str, subclass: tuple[str, str] = ("numpy", "ndarray"), memo: bool = False) -> bytes:
    """NDArrayWrapper as joblib 0.9.2 pickled it under Python 2: NEWOBJ, then BUILD of its __dict__."""
    cls = op.binget(1) if memo else op.glob("joblib.numpy_pickle", "NDArrayWrapper") + op.binput(1)
    state = (op.EMPTY_DICT + op.MARK + _sbs("allow_mmap") + op.NEWTRUE + _sbs("subclass") + op.glob(*subclass)
             + _sbs("filename") + _sbs(filename) + op.SETITEMS)
    return cls + op.EMPTY_TUPLE + op.NEWOBJ + state + op.BUILD


def joblib_092_pickle(name: str, count: int = 3, subclass: tuple[str, str] = ("numpy", "ndarray")) -> bytes:
    """joblib.dump([a1, a2, a3], name) with joblib 0.9.2: a list of wrappers naming name_01.npy..."""
    wrappers = b"".join(nd_array_wrapper(f"{name}_{i + 1:02d}.npy", subclass, memo=i > 0) for i in range(count))
    return op.proto(2) + op.EMPTY_LIST + op.MARK + wrappers + op.APPENDS + op.STOP


def znd_array_wrapper(filename: str, subtype: tuple[str, str] = ("numpy", "ndarray"), shape: int = 5) -> bytes:
    """ZNDArrayWrapper as joblib 0.9.4 pickled it: its __dict__ holds ndarray's reduce arguments
    (init_args for _reconstruct, state for __setstate__ without the data) and the zfile's name."""
    dtype = (op.call(op.glob("numpy", "dtype"), op.short_uni("i8"), op.binint1(0), op.binint1(1))
             + op.MARK + op.binint1(3) + op.short_uni("<") + op.NONE * 3 + op.binint(-1) + op.binint(-1)
             + op.binint1(0) + op.TUPLE + op.BUILD)
    state = op.MARK + op.binint1(1) + op.binint1(shape) + op.TUPLE1 + dtype + op.NEWFALSE + op.TUPLE
    init_args = op.glob(*subtype) + op.binint1(0) + op.TUPLE1 + op.short_binbytes(b"b") + op.TUPLE3
    items = (op.short_uni("state") + state + op.short_uni("init_args") + init_args
             + op.short_uni("filename") + op.short_uni(filename))
    return (op.glob("joblib.numpy_pickle", "ZNDArrayWrapper") + op.EMPTY_TUPLE + op.NEWOBJ
            + op.EMPTY_DICT + op.MARK + items + op.SETITEMS + op.BUILD)


def zfile(body: bytes) -> bytes:
    """numpy_pickle_compat.write_zfile: b"ZF", the length in hex padded to 19 characters, zlib data."""
    return b"ZF" + hex(len(body)).encode().ljust(19) + zlib.compress(body, 1)


def joblib_094_compressed(name: str, subtype: tuple[str, str] = ("numpy", "ndarray")) -> dict[str, bytes]:
    """joblib.dump([a], name, compress=True) with joblib 0.9.4: a zfile pickle and one .npy.z side file of raw
    int64 bytes (what ndarray.__setstate__ gets)."""
    main = op.proto(3) + op.EMPTY_LIST + op.MARK + znd_array_wrapper(f"{name}_01.npy.z", subtype) + op.APPENDS + op.STOP
    return {name: zfile(main), f"{name}_01.npy.z": zfile(struct.pack("<5q", 0, 1, 2, 3, 4))}


def legacy_joblib_repo() -> dict[str, bytes]:
    plain = "model_0.9.2.pkl"
    files = {plain: joblib_092_pickle(plain)}
    for i in range(3):
        files[f"{plain}_{i + 1:02d}.npy"] = npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                                                      body=struct.pack("<2d", 1.0, 2.0))
    return {**files, **joblib_094_compressed("model_0.9.4.pkl.gz")}


register_all([
    Case(FAMILY, "joblib-legacy-side-files", "benign", legacy_joblib_repo,
         why="joblib < 0.10 dumps: NDArrayWrapper with .npy side files, ZNDArrayWrapper with a .npy.z zfile",
         vendor="review", reason="other-finding"),
])
