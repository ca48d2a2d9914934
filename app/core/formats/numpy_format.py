"""Parse a ``.npy`` header by hand (never numpy.load) to learn whether a pickle follows.

numpy.load unpickles the array body when the dtype holds Python objects (``'O'`` anywhere,
including inside structured dtypes). Any other array is raw bytes and is never read.

The header is read as numpy's ``format._read_array_header`` reads it: ``ast.literal_eval`` first;
for format versions 1.0 and 2.0 only, a header that does not parse is read again without the
Python 2 long suffix (``(2L,)``): numpy's ``_filter_header`` drops a name token ``L`` that directly
follows a number token, and nothing else.
"""

from __future__ import annotations

import ast
import io
import struct
import tokenize
from dataclasses import dataclass
from typing import BinaryIO

from app.core.formats.streams import CorruptStream
from app.core.limits import LimitExceeded

MAGIC = b"\x93NUMPY"
MAX_HEADER = 1 << 20  # numpy's own default cap is 10 000 bytes


@dataclass(frozen=True)
class NpyHeader:
    version: tuple[int, int]
    descr: object
    has_object: bool


def read_header(stream: BinaryIO) -> NpyHeader:
    """Consume magic + header; the stream is left at the array body."""
    prefix = _exact(stream, 8)
    if prefix[:6] != MAGIC:
        raise CorruptStream("not a .npy file (bad magic)")
    version = (prefix[6], prefix[7])
    size_format = {1: "<H", 2: "<I", 3: "<I"}.get(version[0])
    if size_format is None:
        raise CorruptStream(f"unknown .npy format version {version}")
    (length,) = struct.unpack(size_format, _exact(stream, struct.calcsize(size_format)))
    if length > MAX_HEADER:
        raise LimitExceeded(f".npy header of {length} bytes")
    raw = _exact(stream, length)
    header = _header_dict(raw.decode("utf-8" if version[0] == 3 else "latin-1", "replace"), version)
    if not isinstance(header, dict) or "descr" not in header:
        raise CorruptStream(".npy header is not a dict with 'descr'")
    return NpyHeader(version, header["descr"], _has_object(header["descr"]))


def _header_dict(text: str, version: tuple[int, int]) -> object:
    try:
        return _literal(text)
    except SyntaxError:
        if version > (2, 0):  # numpy retries only headers a Python 2 numpy could have written
            raise CorruptStream("unparseable .npy header: SyntaxError") from None
    try:
        return _literal(_without_long_suffix(text))
    except SyntaxError:
        raise CorruptStream("unparseable .npy header: SyntaxError (also without Python 2 'L' suffixes)") from None


def _literal(text: str) -> object:
    """The header's literal; SyntaxError passes through (numpy retries on it), other errors are corrupt."""
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, MemoryError, RecursionError) as exc:
        raise CorruptStream(f"unparseable .npy header: {type(exc).__name__}") from None


def _without_long_suffix(text: str) -> str:
    """The header with every name token ``L`` right after a number token removed (``2L`` -> ``2``)."""
    kept: list[tokenize.TokenInfo] = []
    after_number = False
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if not (after_number and token.type == tokenize.NAME and token.string == "L"):
                kept.append(token)
            after_number = token.type == tokenize.NUMBER
        return tokenize.untokenize(kept)
    except (tokenize.TokenError, SyntaxError, ValueError) as exc:  # numpy fails to load such a header too
        raise CorruptStream(f"unparseable .npy header: {type(exc).__name__}") from None


def _has_object(descr: object) -> bool:
    import numpy as np  # only for a .npy header: a scan without one never pays numpy's import
    from numpy.lib import format as npformat

    try:
        dtype = npformat.descr_to_dtype(descr)  # type: ignore[arg-type]  # also takes str/tuple
    except Exception as exc:  # noqa: BLE001 - numpy's dtype parser raises many types on hostile text
        raise CorruptStream(f"unparseable .npy dtype {descr!r:.80}: {type(exc).__name__}") from None
    return bool(isinstance(dtype, np.dtype) and dtype.hasobject)


def _exact(stream: BinaryIO, n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise CorruptStream("truncated .npy header")
    return data
