"""Hard-benign shapes found in the wild (issue 22, bench/wild_corpus.py): files packages on PyPI ship.

Each is rebuilt byte for byte the way its library writes it, from inert values, and must be
approved for a vendor-official repo: llama.cpp's vocab-only GGUFs, numpy's Python 2 era `.npy`
files, joblib < 0.10 pickles with their side files. Nothing here is ever loaded.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from gguf import GGUFValueType

from tests.corpus.registry import Case, register_all

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
