"""Hostile cases this corpus work found hfvet missing (kept so the table shows them until fixed).

- joblib's "lzma" compressor writes ``lzma.LZMAFile(..., format=lzma.FORMAT_ALONE)`` (magic
  ``5d 00``; joblib/compressor.py ``_LZMA_PREFIX``), and ``joblib.load`` sniffs that prefix and
  decompresses before unpickling. hfvet sniffs the file as unknown binary and does not walk it.
"""

from __future__ import annotations

import lzma

from tests.corpus.registry import Case, one_file, register_all
from tests.samples import hostile


def _lzma_alone(protocol: int) -> bytes:
    return lzma.compress(hostile.by_protocol(protocol), format=lzma.FORMAT_ALONE)


register_all([
    Case("compressed-pickles", "joblib-lzma-alone", "hostile", one_file("model.joblib", lambda: _lzma_alone(4)),
         why="joblib.dump(obj, f, compress='lzma'): joblib.load decompresses, then unpickles",
         rule="pickle-dangerous-global"),
    Case("compressed-pickles", "pkl-lzma-alone", "hostile", one_file("model.pkl.lzma", lambda: _lzma_alone(2)),
         why="joblib picks the compressor from the .lzma suffix on dump and the magic on load",
         rule="pickle-dangerous-global"),
])
