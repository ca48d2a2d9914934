"""joblib.dump's layout, written without joblib (read from joblib/numpy_pickle.py).

NumpyPickler (protocol ``pickle.DEFAULT_PROTOCOL``, 4) replaces every ndarray by a
``joblib.numpy_pickle.NumpyArrayWrapper`` (NEWOBJ + BUILD of subclass, shape, order, dtype,
allow_mmap, numpy_array_alignment_bytes), ends the current frame, then writes the array right
into the file: for plain dtypes one padding-length byte, ``\\xff`` padding to a 16-byte
boundary and the raw C-order bytes; for object arrays a nested protocol-2 pickle of the array.
The unpickler reads those bytes when BUILD finishes the wrapper, then carries on.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

import numpy as np

from tests.corpus.stand_ins import modules, stand_in

NumpyArrayWrapper = stand_in("joblib.numpy_pickle", "NumpyArrayWrapper")
ALIGNMENT = 16


class _NumpyPickler(pickle._Pickler):  # the pure-Python Pickler: its save() can be extended
    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        if type(obj) is not np.ndarray:
            super().save(obj, save_persistent_id)
            return
        mmap = not obj.dtype.hasobject
        wrapper = NumpyArrayWrapper()
        wrapper.__dict__.update(subclass=np.ndarray, shape=obj.shape, order="C", dtype=obj.dtype,
                                allow_mmap=mmap, numpy_array_alignment_bytes=ALIGNMENT)
        super().save(wrapper)
        self.framer.commit_frame(force=True)
        self._write_array(obj)

    def _write_array(self, array: np.ndarray) -> None:
        handle = self._file_write.__self__  # type: ignore[attr-defined]
        if array.dtype.hasobject:
            handle.write(pickle.dumps(array, protocol=2))
            return
        padding = ALIGNMENT - (handle.tell() + 1) % ALIGNMENT
        handle.write(bytes([padding]) + b"\xff" * padding + array.tobytes("C"))


def dump(obj: Any, *classes: Any) -> bytes:
    """What ``joblib.dump(obj, f)`` writes (uncompressed); ``classes``: stand-ins it names."""
    out = io.BytesIO()
    with modules(NumpyArrayWrapper, *classes):
        _NumpyPickler(out, protocol=4).dump(obj)
    return out.getvalue()
