"""Shapes from the wild corpus (issue 22), judged by what their loader does.

- joblib < 0.10 (joblib/numpy_pickle_compat.py): NDArrayWrapper.read np.loads its side file with
  allow_pickle=True, then _reconstruct(self.subclass, (0,), 'b') for a subclass; ZNDArrayWrapper.read
  calls _reconstruct(*self.init_args), reads the side file with read_zfile (raw bytes) and hands
  them to ndarray.__setstate__. The wrappers' own __init__ only stores attributes.
- numpy.core._internal._reconstruct(subtype, shape, dtype): ndarray.__new__(subtype, shape, dtype),
  the name pickles from numpy < 1.0 carry.
- CPython's Unpickler (Lib/pickle.py, load): a stream that breaks before any GLOBAL, STACK_GLOBAL,
  REDUCE, INST, OBJ, NEWOBJ or BUILD has run no code.
"""

from __future__ import annotations

import io
import pickle
import struct

import pytest

from app.core.findings import Finding, FindingSink
from app.core.formats.blobs import BytesBlob
from app.core.formats.detect import Format
from app.core.limits import Limits
from app.core.scanners.pickle_engine.analysis import analyze_pickles
from app.core.scanners.pickle_engine.walker import ContainerWalker
from tests.corpus import wild_shapes as wild
from tests.samples import hostile
from tests.samples import opcodes as op


def findings(data: bytes) -> list[Finding]:
    sink = FindingSink("model.pkl", "hfvet-pickle")
    analyze_pickles(io.BytesIO(data), sink, Limits())
    return sink.findings


def pairs(found: list[Finding]) -> set[tuple[str, str]]:
    return {(f.rule, f.severity.value) for f in found}


def serious(found: list[Finding]) -> set[tuple[str, str]]:
    return {p for p in pairs(found) if p[1] in ("high", "critical")}


def walk_zfile(data: bytes) -> list[Finding]:
    sink = FindingSink("model.pkl.gz", "hfvet-pickle")
    ContainerWalker(sink, Limits()).scan(BytesBlob(data), Format.UNKNOWN)
    return sink.findings


# -- joblib < 0.10 wrappers


def test_a_joblib_092_pickle_of_ndarray_wrappers_is_not_serious() -> None:
    found = findings(wild.joblib_092_pickle("model.pkl"))
    assert serious(found) == set()
    side = sorted(f.evidence or "" for f in found if f.rule == "joblib-side-file")
    assert side == [f"joblib.load reading: 'model.pkl_0{i}.npy'" for i in (1, 2, 3)]
    assert {f.severity.value for f in found if f.rule == "joblib-side-file"} == {"medium"}  # np.load, pickles allowed


def test_an_ndarray_wrapper_subclass_off_the_allowlist_is_critical() -> None:
    # NDArrayWrapper.read: _reconstruct(self.subclass, (0,), 'b') instantiates it (numpy < 2).
    found = findings(wild.joblib_092_pickle("model.pkl", subclass=("somelib", "Arr")))
    assert ("pickle-unsafe-argument", "critical") in pairs(found)


def test_a_joblib_094_zfile_with_its_raw_side_file_is_not_serious() -> None:
    files = wild.joblib_094_compressed("model.pkl.gz")
    found = walk_zfile(files["model.pkl.gz"])
    assert serious(found) == set()
    [side] = [f for f in found if f.rule == "joblib-side-file"]
    assert side.severity.value == "low" and "raw" in side.message and "allow_pickle" not in side.message


def test_a_zndarray_wrapper_subtype_off_the_allowlist_is_critical() -> None:
    # ZNDArrayWrapper.read: _reconstruct(*self.init_args) -> ndarray.__new__(subtype).
    main = wild.joblib_094_compressed("m.gz", subtype=("somelib", "Arr"))["m.gz"]
    assert ("pickle-unsafe-argument", "critical") in pairs(walk_zfile(main))


@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/passwd"])
def test_a_zndarray_wrapper_reading_outside_the_folder_is_high(name: str) -> None:
    body = op.proto(3) + op.EMPTY_LIST + op.MARK + wild.znd_array_wrapper(name) + op.APPENDS + op.STOP
    assert ("joblib-side-file", "high") in pairs(walk_zfile(wild.zfile(body)))


def test_a_payload_after_the_wrappers_is_still_critical() -> None:
    body = op.proto(3) + op.EMPTY_LIST + op.MARK + wild.znd_array_wrapper("a.npy.z") + op.system_call() + op.APPENDS
    assert ("pickle-dangerous-global", "critical") in pairs(walk_zfile(wild.zfile(body + op.STOP)))


def test_a_joblib_side_zfile_of_raw_bytes_is_not_serious() -> None:
    # joblib.load on the side file itself (load_compatibility) fails at its first byte, having run nothing.
    side = wild.joblib_094_compressed("model.pkl.gz")["model.pkl.gz_01.npy.z"]
    assert pairs(walk_zfile(side)) == {("pickle-broken-inert", "low")}


def test_a_zfile_holding_a_payload_is_still_critical() -> None:
    assert ("pickle-dangerous-global", "critical") in pairs(walk_zfile(wild.zfile(hostile.by_protocol(2))))


# -- numpy < 1.0's _reconstruct


def _internal_reconstruct(subtype: tuple[str, str]) -> bytes:
    return op.proto(2) + op.call(op.glob("numpy.core._internal", "_reconstruct"), op.glob(*subtype),
                                 op.binint1(0) + op.TUPLE1, op.short_binbytes(b"b")) + op.STOP


def test_numpy_internal_reconstruct_of_an_ndarray_is_plain_data() -> None:
    assert serious(findings(_internal_reconstruct(("numpy", "ndarray")))) == set()


def test_numpy_internal_reconstruct_of_an_unknown_subtype_is_critical() -> None:
    assert ("pickle-unsafe-argument", "critical") in pairs(findings(_internal_reconstruct(("somelib", "Arr"))))


def test_the_rest_of_numpy_core_internal_stays_dangerous() -> None:
    data = op.proto(2) + op.call(op.glob("numpy.core._internal", "_ctypes"), op.NONE) + op.STOP
    assert ("pickle-dangerous-global", "critical") in pairs(findings(data))


# -- broken streams judged by what ran before the break


@pytest.mark.parametrize("data", [
    struct.pack("<4q", 0, 1, 2, 3),  # raw int64 bytes: the first byte is no opcode
    pickle.dumps({"w": [1.0, 2.0]}, protocol=4)[:-6],  # a plain dict cut before STOP
    b"\x80\x02}q\x00(X\x01\x00\x00\x00aq\x01",  # cut inside a dict's items
], ids=["raw-array-bytes", "dict-cut-before-stop", "dict-cut-in-items"])
def test_a_break_before_any_import_or_call_is_inert(data: bytes) -> None:
    assert pairs(findings(data)) == {("pickle-broken-inert", "low")}


def test_a_break_after_a_payload_is_still_serious() -> None:
    found = pairs(findings(hostile.broken_after_payload()))
    assert {("pickle-dangerous-global", "critical"), ("pickle-broken-stream", "high")} <= found


def test_a_break_after_an_import_is_still_high() -> None:
    # GLOBAL imports the module (its import-time code runs) before the stream breaks.
    data = op.proto(2) + op.glob("collections", "OrderedDict") + b"\xff"
    assert ("pickle-broken-stream", "high") in pairs(findings(data))


@pytest.mark.parametrize("data", [
    b"\x80\x02S'abc\n" + op.system_call() + op.STOP,  # a protocol-0 string hfvet may read otherwise than CPython
    b"\x80\x02t" + op.system_call() + op.STOP,  # a stack hfvet may model otherwise
], ids=["argument-text", "stack-model"])
def test_a_break_only_hfvet_might_see_stays_high(data: bytes) -> None:
    # If hfvet's reading were wrong there, a loader would read on into the payload: not inert.
    assert ("pickle-broken-stream", "high") in pairs(findings(data))


def test_a_break_in_a_later_stacked_pickle_stays_high() -> None:
    # Loaders differ on whether they read past the first pickle (torch's legacy format reads five).
    assert ("pickle-broken-stream", "high") in pairs(findings(hostile.broken_second_pickle()))
