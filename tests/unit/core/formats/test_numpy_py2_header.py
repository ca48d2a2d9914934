"""`.npy` headers read as numpy's format._read_array_header reads them, Python 2 era headers included.

numpy (numpy/lib/format.py, _read_array_header and _filter_header): literal_eval first; on a
SyntaxError, for versions (1, 0) and (2, 0) only, again without a name token `L` that follows a
number token (`(2L,)` was how Python 2 wrote a long).
"""

from __future__ import annotations

import io

import pytest

from app.core.formats.numpy_format import read_header
from app.core.formats.streams import CorruptStream
from tests.corpus.wild_shapes import npy_bytes


def test_a_python2_long_shape_is_read_as_numpy_reads_it() -> None:
    # numpy/lib/tests/data/win64python2.npy: written on 64-bit Windows by Python 2.
    data = npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2L,), }", body=b"\x00" * 16)
    header = read_header(io.BytesIO(data))
    assert (header.version, header.descr, header.has_object) == ((1, 0), "<f8", False)


def test_a_python2_object_array_is_still_one_that_holds_a_pickle() -> None:
    data = npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (2L, 3L), }", version=(2, 0))
    assert read_header(io.BytesIO(data)).has_object


def test_version_3_headers_are_not_retried() -> None:
    # numpy retries only `version <= (2, 0)`: a 3.0 header with `2L` fails to load.
    with pytest.raises(CorruptStream, match="SyntaxError"):
        read_header(io.BytesIO(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2L,), }",
                                          version=(3, 0))))


@pytest.mark.parametrize("shape", ["(nL,)", "(2LL,)", "(2L L,)"])
def test_only_an_L_after_a_number_is_dropped(shape: str) -> None:
    with pytest.raises(CorruptStream):
        read_header(io.BytesIO(npy_bytes(f"{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}")))


def test_an_L_inside_a_string_is_kept() -> None:
    data = npy_bytes("{'descr': [('2L', '<f8')], 'fortran_order': False, 'shape': (1L,), }")
    assert read_header(io.BytesIO(data)).descr == [("2L", "<f8")]
