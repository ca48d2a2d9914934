"""joblib interleaves raw numpy array bytes with its pickle stream.

``joblib.load`` unpickles with ``NumpyUnpickler`` (joblib/numpy_pickle.py), whose
``load_build`` runs the normal BUILD and then, when the object on top of the stack is a
``NumpyArrayWrapper``, reads the array right from the file: an optional padding-length byte
and that many bytes (``numpy_array_alignment_bytes`` set, joblib >= 1.2), then
``count * dtype.itemsize`` bytes, or, when ``dtype.hasobject``, a whole nested pickle read by
a plain ``Unpickler`` (``read_array``). Plain ``pickle.load`` does none of this: it reads
those bytes as opcodes. So the array rules apply only to the joblib reading of a stream.

The wrapper's attributes are what the unpickler gave the instance: ``__init__`` arguments
when it was called (REDUCE, INST, OBJ: ``NumpyArrayWrapper(subclass, shape, order, dtype,
allow_mmap=False, numpy_array_alignment_bytes=16)``), never for ``NEWOBJ`` or copyreg's
``__new__``; then every BUILD's state dict and slot state (pickle's ``load_build``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import BinaryIO

from app.core.formats.detect import Format
from app.core.formats.streams import decompressed
from app.core.limits import Limits
from app.core.scanners.pickle_engine.catalog import canonical
from app.core.scanners.pickle_engine.numpy_dtype import UnsizedDtype, dtype_size
from app.core.scanners.pickle_engine.recording import replayed
from app.core.scanners.pickle_engine.values import (
    MAX_KEPT_ITEMS,
    Call,
    Const,
    DictVal,
    GlobalRef,
    ListVal,
    TupleVal,
    Value,
    children,
)

WRAPPER = "joblib.numpy_pickle.NumpyArrayWrapper"
# joblib < 0.10 wrappers: the array lives in a side file (np.load with allow_pickle=True, or read_zfile).
SIDE_FILE_WRAPPERS = frozenset({
    "joblib.numpy_pickle.NDArrayWrapper", "joblib.numpy_pickle_compat.NDArrayWrapper",
    "joblib.numpy_pickle.ZNDArrayWrapper", "joblib.numpy_pickle_compat.ZNDArrayWrapper",
})
# ZNDArrayWrapper.read: read_zfile of the side file, raw bytes handed to ndarray.__setstate__.
RAW_SIDE_FILE_WRAPPERS = frozenset({"joblib.numpy_pickle.ZNDArrayWrapper",
                                    "joblib.numpy_pickle_compat.ZNDArrayWrapper"})
_WRAPPERS = SIDE_FILE_WRAPPERS | {WRAPPER}
# copyreg's helpers that only call cls.__new__: the instance gets no __init__ attributes.
_COPYREG_NEW = frozenset({"copyreg._reconstructor", "copyreg.__newobj__", "copyreg.__newobj_ex__"})
_INIT_OPCODES = frozenset({"REDUCE", "INST", "OBJ"})
_INIT_PARAMETERS = ("subclass", "shape", "order", "dtype", "allow_mmap", "numpy_array_alignment_bytes")
_INIT_DEFAULTS: dict[str, Value] = {"allow_mmap": Const(False), "numpy_array_alignment_bytes": Const(16)}
_INT64_LIMIT = 1 << 63  # joblib multiplies the shape in int64: a larger count never reshapes


class UnsizedArray(Exception):
    """joblib's read of this wrapper cannot be predicted; the joblib reading stops here."""


@dataclass(frozen=True)
class ArrayLayout:
    has_object: bool  # a nested pickle follows instead of raw bytes
    nbytes: int
    padded: bool  # one length byte then that many padding bytes precede the data


def wrapper_class(call: Call) -> str | None:
    """The joblib wrapper class ``call`` may make an instance of, if any.

    Besides the class itself and copyreg's constructors, any call that takes a wrapper class
    (``functools.partial(NumpyArrayWrapper)``...) counts: ``load_build`` checks the instance,
    not how it was made, so a construction hfvet does not model must not pass as no wrapper.
    """
    cls = _constructed(call)
    if cls is not None:
        return cls if cls in _WRAPPERS else None
    found = sorted(_globals_in(call) & _WRAPPERS)
    return found[0] if found else None


def _globals_in(call: Call, budget: int = 256) -> set[str]:
    """Globals a call was built from: its callable, its arguments, theirs (bounded)."""
    names: set[str] = set()
    todo: list[Value] = [call]
    while todo and budget > 0:
        budget -= 1
        value = todo.pop()
        if isinstance(value, GlobalRef):
            names.add(canonical(value.module, value.name))
        elif isinstance(value, Call):
            todo.extend((value.func, value.args))
        else:
            todo.extend(children(value))
    return names


def is_array_wrapper(call: Call) -> bool:
    return wrapper_class(call) == WRAPPER


def init_attributes(call: Call) -> dict[str, Value]:
    """Attributes ``__init__`` set when the unpickler called the class (none for __new__)."""
    if _constructed(call) is None:
        raise UnsizedArray("wrapper made by a call hfvet does not model")
    if call.opcode not in _INIT_OPCODES or not isinstance(call.func, GlobalRef) or _via_copyreg(call):
        return {}
    if not isinstance(call.args, TupleVal):
        raise UnsizedArray("wrapper called with arguments hfvet does not model")
    if canonical(call.func.module, call.func.name) in SIDE_FILE_WRAPPERS:
        return {"filename": call.args.items[0]} if call.args.items else {}  # __init__(filename, ...)
    if not 4 <= len(call.args.items) <= len(_INIT_PARAMETERS):
        raise UnsizedArray("NumpyArrayWrapper called with arguments its __init__ rejects")
    attrs = dict(_INIT_DEFAULTS)
    attrs.update(zip(_INIT_PARAMETERS, call.args.items, strict=False))
    return attrs


def _constructed(call: Call) -> str | None:
    """The class a plain construction instantiates: cls(...), NEWOBJ, copyreg's helpers."""
    func = call.func
    if not isinstance(func, GlobalRef):
        return None
    if _via_copyreg(call):
        args = call.args
        first = args.items[0] if isinstance(args, TupleVal) and args.items else None
        return canonical(first.module, first.name) if isinstance(first, GlobalRef) else None
    return canonical(func.module, func.name)


def _via_copyreg(call: Call) -> bool:
    func = call.func
    return isinstance(func, GlobalRef) and canonical(func.module, func.name) in _COPYREG_NEW


def apply_state(attrs: dict[str, Value], state: Value) -> None:
    """What pickle's ``load_build`` does to an instance without ``__setstate__``."""
    slots: Value | None = None
    if isinstance(state, TupleVal) and len(state.items) == 2:
        state, slots = state.items
    for part in (state, slots):
        if part is None or (isinstance(part, Const) and part.value is None):
            continue
        if not isinstance(part, DictVal) or part.others or len(part.items) >= 2 * MAX_KEPT_ITEMS:
            raise UnsizedArray("wrapper state is not a dict of attribute names hfvet keeps whole")
        attrs.update(part.items)


def array_layout(attrs: dict[str, Value]) -> ArrayLayout:
    """The bytes ``NumpyArrayWrapper.read_array`` takes from the file after the BUILD."""
    count = _count(attrs.get("shape"))
    dtype = attrs.get("dtype")
    if dtype is None:
        raise UnsizedArray("wrapper without a dtype")
    try:
        size = dtype_size(dtype)
    except UnsizedDtype as exc:
        raise UnsizedArray(f"array dtype cannot be sized: {exc}") from None
    if size.has_object:
        return ArrayLayout(True, 0, False)
    if size.itemsize <= 0:
        raise UnsizedArray(f"array dtype of itemsize {size.itemsize}")  # joblib divides by it
    alignment = attrs.get("numpy_array_alignment_bytes")
    padded = alignment is not None and not (isinstance(alignment, Const) and alignment.value is None)
    return ArrayLayout(False, count * size.itemsize, padded)


def _count(shape: Value | None) -> int:
    if not isinstance(shape, (TupleVal, ListVal)):
        raise UnsizedArray("wrapper shape is not a tuple")  # joblib takes len(shape)
    if isinstance(shape, ListVal) and len(shape.items) >= MAX_KEPT_ITEMS:
        raise UnsizedArray("wrapper shape longer than the analysis keeps")
    dims: list[int] = []
    for dim in shape.items:
        if not (isinstance(dim, Const) and isinstance(dim.value, int) and dim.value >= 0):
            raise UnsizedArray("wrapper shape holds a value that is not a size")
        dims.append(int(dim.value))
    count = math.prod(dims)
    if count >= _INT64_LIMIT:
        raise UnsizedArray("wrapper shape overflows joblib's int64 element count")
    return count


def side_file(attrs: dict[str, Value]) -> tuple[str | None, bool]:
    """The side file an NDArrayWrapper makes ``np.load`` open, and whether it escapes the folder.

    ``NDArrayWrapper.read`` opens ``os.path.join(dirname, self.filename)``: an absolute name
    or one with ``..`` reads a file outside the checkpoint's folder; a name hfvet cannot
    read (computed at load time) may be anything.
    """
    name = attrs.get("filename")
    if not (isinstance(name, Const) and isinstance(name.value, str)):
        return None, True
    parts = name.value.replace("\\", "/").split("/")
    escapes = name.value.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]
    return name.value, escapes


ZFILE_PREFIX = b"ZF"  # joblib/compressor.py _ZFILE_PREFIX
_ZFILE_LENGTH = len(hex(2**64))  # numpy_pickle_compat._MAX_LEN: the padded hex length field


def zfile_payload(stream: BinaryIO, limits: Limits) -> BinaryIO | None:
    """joblib < 0.9.3's container, which joblib.load still opens (``load_compatibility``): its payload.

    ``read_zfile``: "ZF", the payload length in hex padded to 19 characters, an optional
    space, then one zlib stream; ``ZipNumpyUnpickler`` unpickles it, reading side files for
    NDArrayWrapper and no in-stream arrays. A header ``int(.., 16)`` rejects loads nothing (None).
    """
    header = stream.read(len(ZFILE_PREFIX) + _ZFILE_LENGTH)
    try:
        int(header[len(ZFILE_PREFIX):], 16)
    except ValueError:
        return None  # joblib fails before unpickling anything
    first = stream.read(1)
    return decompressed(replayed(b"" if first == b" " else first, stream), Format.ZLIB, limits)
