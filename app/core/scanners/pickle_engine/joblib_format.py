"""joblib interleaves raw numpy array bytes with its pickle stream.

``joblib.load`` runs a pickle in which each ``NumpyArrayWrapper`` BUILD is followed by the
array's bytes (after optional alignment padding), or, for object arrays, by a whole nested
pickle. To keep walking the opcodes that follow, the analysis must step over exactly those
bytes, sized from the wrapper's own state (shape, dtype).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.core.scanners.pickle_engine.values import Call, Const, DictVal, GlobalRef, TupleVal, Value

WRAPPER = "joblib.numpy_pickle.NumpyArrayWrapper"


@dataclass(frozen=True)
class ArrayLayout:
    has_object: bool  # a nested pickle follows instead of raw bytes
    nbytes: int
    padded: bool  # one length byte then that many padding bytes precede the data


def is_array_wrapper(call: Call) -> bool:
    func = call.func
    if isinstance(func, GlobalRef) and func.dotted == "copyreg._reconstructor":
        args = call.args
        func = args.items[0] if isinstance(args, TupleVal) and args.items else func
    return isinstance(func, GlobalRef) and func.dotted == WRAPPER


def array_layout(state: Value | None) -> ArrayLayout | None:
    """The bytes joblib reads after the wrapper, or None when they cannot be sized."""
    if not isinstance(state, DictVal):
        return None
    count = _count(state.items.get("shape"))
    descr = _dtype_descr(state.items.get("dtype"))
    if count is None or descr is None:
        return None
    padded = "numpy_array_alignment_bytes" in state.items and not _is_none(
        state.items["numpy_array_alignment_bytes"]
    )
    if descr.lstrip("<>|=").upper().startswith("O"):
        return ArrayLayout(True, 0, False)
    try:
        itemsize = np.dtype(descr).itemsize
    except (TypeError, ValueError):
        return None
    return ArrayLayout(False, count * itemsize, padded)


def _count(shape: Value | None) -> int | None:
    if isinstance(shape, Const) and isinstance(shape.value, int):
        return max(shape.value, 0)
    if not isinstance(shape, TupleVal):
        return None
    dims: list[int] = []
    for dim in shape.items:
        if not (isinstance(dim, Const) and isinstance(dim.value, int) and dim.value >= 0):
            return None
        dims.append(dim.value)
    return math.prod(dims)


def _dtype_descr(dtype: Value | None) -> str | None:
    """The dtype string of ``numpy.dtype(descr, align, copy)`` when it is a plain dtype."""
    if not (isinstance(dtype, Call) and isinstance(dtype.func, GlobalRef)):
        return None
    if dtype.func.dotted not in ("numpy.dtype", "numpy.core.multiarray.dtype"):
        return None
    args = dtype.args
    if not (isinstance(args, TupleVal) and args.items and isinstance(args.items[0], Const)):
        return None
    descr = args.items[0].value
    if not isinstance(descr, str) or _has_fields(dtype.state):
        return None  # structured dtypes may hide object fields: do not guess their size
    return descr


def _has_fields(state: Value | None) -> bool:
    if state is None:
        return False
    if not isinstance(state, TupleVal) or len(state.items) < 5:
        return True
    return not (_is_none(state.items[3]) and _is_none(state.items[4]))


def _is_none(value: Value) -> bool:
    return isinstance(value, Const) and value.value is None
