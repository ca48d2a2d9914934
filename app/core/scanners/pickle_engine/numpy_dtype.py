"""Size a pickled ``numpy.dtype`` from its full state, the way numpy's unpickling sets it.

A dtype pickles as ``numpy.dtype(descr, align, copy)`` then BUILD with the state tuple
``(version, byteorder, subarray, names, fields, elsize, alignment, flags[, metadata])``.
numpy's ``arraydescr_setstate`` (numpy/_core/src/multiarray/descriptor.c) trusts that
state: for the "extended" kinds (bytes ``S``, str ``U``, void ``V``: every structured and
sub-array dtype) the element size becomes ``elsize``, whatever ``descr`` said; and from
version 3 on, ``hasobject`` is bit 0 of ``flags``, whatever the fields hold. Earlier
versions recompute it (``_descr_find_object``: any flag, an object base, or an object field).
A loader that reads ``count * itemsize`` array bytes, or a nested pickle when ``hasobject``,
reads exactly what these rules say, so hfvet computes them the same way.

numpy itself only ever sees a bounded literal (``descr``: strings, numbers, tuples, lists,
dicts of those); the state is never handed to numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.scanners.pickle_engine.catalog import canonical
from app.core.scanners.pickle_engine.values import (
    MAX_KEPT_ITEMS,
    Call,
    Const,
    DictVal,
    GlobalRef,
    ListVal,
    TupleVal,
    Value,
)

if TYPE_CHECKING:
    import numpy as np

DTYPE_NAMES = frozenset({"numpy.dtype", "numpy.core.multiarray.dtype", "numpy._core.multiarray.dtype"})
_EXTENDED_KINDS = frozenset("SUV")  # numpy's PyTypeNum_ISEXTENDED: elsize comes from the state
_HASOBJECT = 0x01  # NPY_ITEM_HASOBJECT
_MAX_NODES = 512  # a descr literal larger than this is no dtype a checkpoint pickles
_MAX_DEPTH = 8
_MAX_TEXT = 256
_MAX_INT = 1 << 31
_STATE_LENGTHS = {9: 3, 8: 3, 7: 3, 6: 3, 5: 0}  # tuple length -> first field index after version


class UnsizedDtype(Exception):
    """The dtype cannot be sized as numpy would size it (or numpy would reject it)."""


@dataclass(frozen=True)
class DtypeSize:
    itemsize: int
    has_object: bool


def dtype_size(value: Value, depth: int = 0) -> DtypeSize:
    """Element size and ``hasobject`` of a pickled dtype, or ``UnsizedDtype``."""
    if depth > _MAX_DEPTH:
        raise UnsizedDtype("dtype nested too deep")
    if not (isinstance(value, Call) and isinstance(value.func, GlobalRef)
            and canonical(value.func.module, value.func.name) in DTYPE_NAMES):
        raise UnsizedDtype("the dtype is not a numpy.dtype(...) call")
    base = _base_dtype(value.args)
    if value.state is None:
        return DtypeSize(base.itemsize, bool(base.hasobject))
    return _with_state(base, value.state, depth)


def _base_dtype(args: Value) -> np.dtype[np.generic]:
    if not (isinstance(args, TupleVal) and args.items):
        raise UnsizedDtype("numpy.dtype called without a descriptor")
    descr = _literal(args.items[0], [0], 0)
    align = _literal(args.items[1], [0], 0) if len(args.items) > 1 else False
    try:
        import numpy as np  # only when a pickle holds a dtype: a scan of plain pickles never pays its import

        return np.dtype(descr, align=bool(align))  # type: ignore[call-overload, no-any-return]
    except Exception as exc:  # noqa: BLE001 - numpy rejects bad descriptors with many exception types
        raise UnsizedDtype(f"numpy rejects the descriptor {descr!r:.60}: {type(exc).__name__}") from None


def _with_state(base: np.dtype[np.generic], state: Value, depth: int) -> DtypeSize:
    if not isinstance(state, TupleVal) or len(state.items) not in _STATE_LENGTHS:
        raise UnsizedDtype("dtype state is not a 5- to 9-tuple")
    items = state.items
    version = 0 if len(items) == 5 else _int(items[0], "version")
    if not 0 <= version <= 4:
        raise UnsizedDtype(f"numpy cannot read dtype state version {version}")
    rest = items[1:] if len(items) > 5 else items
    # rest: byteorder, subarray, [names,] fields, elsize, alignment[, flags[, metadata]]
    has_names = len(items) >= 7
    fields = rest[3] if has_names else rest[2]
    elsize = _int(rest[4] if has_names else rest[3], "elsize")
    flags = _int(rest[6], "flags") if len(items) >= 8 else 0
    if -128 <= flags < 0:
        flags += 128  # numpy once stored the flags in a signed char and normalises them back
    if flags < 0:
        raise UnsizedDtype("negative dtype flags")
    itemsize = elsize if base.kind in _EXTENDED_KINDS else base.itemsize
    if version >= 3:
        return DtypeSize(itemsize, bool(flags & _HASOBJECT))
    found = bool(flags) or base.kind == "O" or _any_object_field(fields, depth)
    return DtypeSize(itemsize, found)


def _any_object_field(fields: Value, depth: int) -> bool:
    if isinstance(fields, Const) and fields.value is None:
        return False
    if not isinstance(fields, DictVal) or fields.others or len(fields.items) >= MAX_KEPT_ITEMS:
        raise UnsizedDtype("dtype fields are not a dict of names")
    for entry in fields.items.values():
        if not (isinstance(entry, TupleVal) and entry.items):
            raise UnsizedDtype("dtype field is not a (dtype, offset) tuple")
        if dtype_size(entry.items[0], depth + 1).has_object:
            return True
    return False


def _int(value: Value, what: str) -> int:
    if isinstance(value, Const) and isinstance(value.value, int):
        return int(value.value)
    raise UnsizedDtype(f"dtype state {what} is not an integer")


def _literal(value: Value, nodes: list[int], depth: int) -> object:
    """A plain Python literal for numpy, bounded in size, depth and number magnitude."""
    nodes[0] += 1
    if nodes[0] > _MAX_NODES or depth > _MAX_DEPTH:
        raise UnsizedDtype("dtype descriptor too large")
    if isinstance(value, Const):
        return _scalar(value.value)
    if isinstance(value, TupleVal):
        return tuple(_literal(v, nodes, depth + 1) for v in value.items)
    if isinstance(value, ListVal):
        if len(value.items) >= MAX_KEPT_ITEMS:
            raise UnsizedDtype("dtype descriptor list longer than the analysis keeps")
        return [_literal(v, nodes, depth + 1) for v in value.items]
    if isinstance(value, DictVal) and not value.others and len(value.items) < MAX_KEPT_ITEMS:
        return {k: _literal(v, nodes, depth + 1) for k, v in value.items.items()}
    raise UnsizedDtype("dtype descriptor holds a value hfvet does not model")


def _scalar(value: object) -> object:
    if isinstance(value, (str, bytes)) and len(value) <= _MAX_TEXT:
        return value
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int) and abs(value) < _MAX_INT:
        return value
    raise UnsizedDtype("dtype descriptor holds an over-long or unsupported constant")
