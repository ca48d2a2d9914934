"""joblib and numpy as they read a file: every case is derived from the loaders' source.

joblib/numpy_pickle.py: ``NumpyUnpickler.load_build`` runs the normal BUILD, then reads the
array of a ``NumpyArrayWrapper`` on top of the stack (``read_array``: padding byte when
``numpy_array_alignment_bytes`` is set, then ``count * dtype.itemsize`` bytes, or a nested
plain ``Unpickler`` when ``dtype.hasobject``). numpy's ``arraydescr_setstate`` takes the
element size of S/U/V dtypes and, from state version 3 on, ``hasobject`` (flag bit 0) from
the pickled state. Plain ``pickle.load`` reads the array bytes as opcodes. All payloads are
inert strings in opcodes that are never loaded.
"""

from __future__ import annotations

import io
import lzma
import pickle
import pickletools
import struct
import sys
import types
import zlib

import numpy as np
import pytest

from app.core.findings import Finding, FindingSink
from app.core.formats.blobs import BytesBlob
from app.core.formats.detect import HEAD_BYTES, detect_format
from app.core.limits import Limits
from app.core.scanners.pickle_engine.analysis import analyze_pickles
from app.core.scanners.pickle_engine.walk_state import ReadMode
from app.core.scanners.pickle_engine.walker import ContainerWalker
from tests.samples import benign, hostile
from tests.samples import opcodes as op

WRAPPER = op.glob("joblib.numpy_pickle", "NumpyArrayWrapper")
CRITICAL = ("pickle-dangerous-global", "critical")
# posix.system("echo pwned") run for effect, its result popped: the surrounding pickle stays valid.
HIDDEN = op.glob("posix", "system") + op.uni(op.PAYLOAD) + op.TUPLE1 + op.REDUCE + op.POP


def findings(data: bytes, **kwargs: object) -> list[Finding]:
    sink = FindingSink("model.joblib", "hfvet-pickle")
    analyze_pickles(io.BytesIO(data), sink, Limits(), **kwargs)  # type: ignore[arg-type]
    return sink.findings


def pairs(found: list[Finding]) -> set[tuple[str, str]]:
    return {(f.rule, f.severity.value) for f in found}


def dtype(descr: bytes, state: bytes | None = None) -> bytes:
    """numpy.dtype(descr, False, True), then BUILD with ``state`` (a pickled tuple) if given."""
    made = op.call(op.glob("numpy", "dtype"), descr, op.NEWFALSE, op.NEWTRUE)
    return made + state + op.BUILD if state is not None else made


def state(*items: bytes) -> bytes:
    return op.MARK + b"".join(items) + op.TUPLE


def v3_state(elsize: int, flags: int, names: bytes = op.NONE, fields: bytes = op.NONE) -> bytes:
    """(3, '|', None, names, fields, elsize, alignment, flags): numpy's pickled dtype state."""
    return state(op.binint1(3), op.short_uni("|"), op.NONE, names, fields, op.binint(elsize), op.binint(1),
                 op.binint(flags))


def wrapper(shape: tuple[int, ...], dtype_ops: bytes, aligned: bool = False) -> bytes:
    """NEWOBJ'd NumpyArrayWrapper (attributes only from BUILD), as joblib >= 1.2 pickles it."""
    items = (op.short_uni("subclass") + op.glob("numpy", "ndarray") + op.short_uni("shape")
             + op.MARK + b"".join(op.binint(d) for d in shape) + op.TUPLE
             + op.short_uni("order") + op.short_uni("C") + op.short_uni("dtype") + dtype_ops)
    if aligned:
        items += op.short_uni("numpy_array_alignment_bytes") + op.binint1(16)
    return WRAPPER + op.EMPTY_TUPLE + op.NEWOBJ + op.EMPTY_DICT + op.MARK + items + op.SETITEMS + op.BUILD


def joblib_file(wrapper_ops: bytes, after: bytes) -> bytes:
    """{'w': <array>, 'n': 5}: the wrapper, the bytes joblib reads for it, then the rest."""
    return (op.proto(4) + op.EMPTY_DICT + op.MARK + op.short_uni("w") + wrapper_ops + after
            + op.short_uni("n") + op.binint1(5) + op.SETITEMS + op.STOP)


def nested(payload: bytes) -> bytes:
    """An object array's nested pickle: a list holding the value, as pickle.dump(protocol=5) would."""
    return op.proto(5) + op.EMPTY_LIST + payload + op.STOP


def test_benign_joblib_file_stays_clean_under_both_readings() -> None:
    assert findings(benign.joblib_like()) == []


def test_plain_pickle_load_runs_opcodes_joblib_reads_as_array_bytes() -> None:
    # pickle.load has no load_build hook: after the wrapper's BUILD it parses the declared
    # "array data" as opcodes. Only joblib skips them, so skipping them always hid the call.
    hidden = HIDDEN + op.NONE * (-len(HIDDEN) % 8)  # a whole number of float64 elements
    data = joblib_file(wrapper((len(hidden) // 8,), dtype(op.short_uni("f8"))), hidden)
    found = findings(data)
    assert CRITICAL in pairs(found)
    assert any(f.evidence.startswith("pickle.load reading:") for f in found if f.rule == CRITICAL[0])


def test_itemsize_comes_from_the_state_elsize_of_a_void_dtype() -> None:
    # arraydescr_setstate: for V dtypes, elsize from the state replaces the descriptor's size.
    # 'V64' with elsize 8: joblib reads 8 bytes, then runs what follows. The 8 bytes are invalid
    # opcodes, so pickle.load breaks there: only a correctly sized joblib reading sees the call.
    v = dtype(op.short_uni("V64"), v3_state(elsize=8, flags=16))
    data = joblib_file(wrapper((1,), v), b"\xff" * 8 + HIDDEN + b"\x00" * 56)
    found = findings(data)
    assert [f.evidence for f in found if f.rule == CRITICAL[0]] == ["joblib.load reading: posix.system"]


def test_hasobject_comes_from_the_state_flags() -> None:
    # From state version 3 on, hasobject is flag bit 0, whatever the descriptor: 'V8' with
    # flags 1 makes read_array unpickle a nested stream instead of reading 8 raw bytes.
    v = dtype(op.short_uni("V8"), v3_state(elsize=8, flags=1))
    data = joblib_file(wrapper((1,), v), nested(HIDDEN))  # object arrays have no padding byte
    assert CRITICAL in pairs(findings(data))


def test_object_dtype_with_cleared_flags_reads_raw_bytes() -> None:
    # 'O8' with flags 0 (state version 3): hasobject is false, so joblib reads count * 8 raw
    # bytes and no nested pickle. Those 8 bytes open a BINUNICODE that would swallow the call
    # if they were walked as a nested pickle.
    v = dtype(op.short_uni("O8"), v3_state(elsize=-1, flags=0))
    raw = b"X" + struct.pack("<I", len(HIDDEN) + 3) + b"abc"
    data = joblib_file(wrapper((1,), v), raw + HIDDEN)
    assert CRITICAL in pairs(findings(data))


def test_structured_dtype_with_an_object_field_is_an_object_array() -> None:
    # numpy.dtype([('a', 'f8'), ('b', 'O')]) without a state: hasobject from its field.
    descr = (op.MARK + op.short_uni("a") + op.short_uni("f8") + op.TUPLE2 + op.short_uni("b") + op.short_uni("O")
             + op.TUPLE2 + b"l")  # LIST of the two (name, format) tuples
    data = joblib_file(wrapper((1,), dtype(descr)), nested(HIDDEN))
    assert CRITICAL in pairs(findings(data))


def test_old_dtype_state_finds_objects_in_fields() -> None:
    # State version < 3: numpy recomputes hasobject (_descr_find_object) from the fields.
    obj = dtype(op.short_uni("O8"))
    fields = (op.EMPTY_DICT + op.short_uni("b") + obj + op.binint1(0) + op.TUPLE2 + op.SETITEM)
    old = state(op.binint1(2), op.short_uni("|"), op.NONE, op.short_uni("b") + op.TUPLE1, fields,
                op.binint(8), op.binint(1), op.binint(0))
    data = joblib_file(wrapper((1,), dtype(op.short_uni("V8"), old)), nested(HIDDEN))
    assert CRITICAL in pairs(findings(data))


def test_called_wrapper_gets_init_default_alignment() -> None:
    # REDUCE runs NumpyArrayWrapper.__init__: numpy_array_alignment_bytes defaults to 16, so
    # read_array reads a padding-length byte and that much padding before the data.
    made = op.call(WRAPPER, op.glob("numpy", "ndarray"), op.binint1(1) + op.TUPLE1, op.short_uni("C"),
                   dtype(op.short_uni("f8")))
    data = joblib_file(made + op.EMPTY_DICT + op.BUILD, b"\x03" + b"\xff" * 3 + b"\xff" * 8 + HIDDEN)
    assert CRITICAL in pairs(findings(data))


def test_newobj_arguments_do_not_set_attributes() -> None:
    # NEWOBJ only calls __new__: its arguments (alignment 16 here) never become attributes, so
    # without the key in the BUILD state there is no padding byte before the data.
    args = (op.MARK + op.glob("numpy", "ndarray") + op.binint1(1) + op.TUPLE1 + op.short_uni("C")
            + dtype(op.short_uni("f8")) + op.NEWFALSE + op.binint1(16) + op.TUPLE)
    items = (op.short_uni("shape") + op.binint1(1) + op.TUPLE1 + op.short_uni("dtype") + dtype(op.short_uni("f8")))
    made = WRAPPER + args + op.NEWOBJ + op.EMPTY_DICT + op.MARK + items + op.SETITEMS + op.BUILD
    data = joblib_file(made, b"\xff" * 8 + HIDDEN)
    assert [f.evidence for f in findings(data) if f.rule == CRITICAL[0]] == ["joblib.load reading: posix.system"]


def test_nested_object_array_stream_is_read_by_a_plain_unpickler() -> None:
    # read_array unpickles object arrays with a plain Unpickler: a wrapper BUILD inside that
    # stream reads no array bytes, so the opcodes right after it run.
    inner_wrapper = wrapper((64,), dtype(op.short_uni("f8")))
    inner = op.proto(5) + inner_wrapper + op.POP + HIDDEN + op.NONE + op.STOP
    data = joblib_file(wrapper((1,), dtype(op.short_uni("O8"))), inner)
    assert CRITICAL in pairs(findings(data))


def test_a_dtype_that_cannot_be_sized_is_a_finding_and_the_plain_reading_goes_on() -> None:
    # A numpy scalar class is no dtype call: what joblib would read cannot be predicted.
    data = joblib_file(wrapper((1,), op.glob("numpy", "float64")), HIDDEN)
    assert {("joblib-array-unsized", "high"), CRITICAL} <= pairs(findings(data))


@pytest.mark.parametrize("descr", [b"S" * 300, "f8," * 200])
def test_oversized_descriptors_are_never_handed_to_numpy(descr: object) -> None:
    text = op.uni(descr.decode() if isinstance(descr, bytes) else str(descr))
    data = joblib_file(wrapper((1,), dtype(text)), b"\x00" * 8)
    assert ("joblib-array-unsized", "high") in pairs(findings(data))


def test_wrapper_subclass_off_the_allowlist_is_critical() -> None:
    # read(): with numpy < 2 a subclass other than ndarray/memmap is rebuilt through numpy's
    # _reconstruct(subclass, ...), which instantiates it (the catalog's argument rule; a guard).
    w = wrapper((1,), dtype(op.short_uni("f8"))).replace(op.glob("numpy", "ndarray"), op.glob("evil_mod", "Arr"))
    assert ("pickle-unsafe-argument", "critical") in pairs(findings(joblib_file(w, b"\x00" * 8)))


@pytest.mark.parametrize(("name", "severity"), [("model.pkl_01.npy", "medium"), ("../../etc/x.npy", "high"),
                                                 ("/tmp/x.npy", "high")])
def test_old_side_file_wrapper_names_the_file_np_load_opens(name: str, severity: str) -> None:
    # joblib < 0.10 NDArrayWrapper.read: numpy opens os.path.join(dirname, filename) with pickles allowed.
    w = (op.glob("joblib.numpy_pickle", "NDArrayWrapper") + op.EMPTY_TUPLE + op.NEWOBJ + op.EMPTY_DICT
         + op.short_uni("filename") + op.short_uni(name) + op.SETITEM + op.BUILD)
    found = [f for f in findings(joblib_file(w, b"")) if f.rule == "joblib-side-file"]
    assert [(f.severity.value, f.evidence) for f in found] == [(severity, f"joblib.load reading: {name!r}")]


def test_benign_object_array_as_joblib_writes_it_is_clean() -> None:
    inner = pickle.dumps(np.array([1, "a", None], dtype=object), protocol=5)
    data = joblib_file(wrapper((3,), dtype(op.short_uni("O8"), v3_state(elsize=-1, flags=63))), inner)
    assert findings(data) == []


def test_benign_structured_array_is_clean() -> None:
    aligned = np.dtype([("a", "u1"), ("b", "f8")], align=True)  # V16, elsize 16, flags 144
    v = dtype(op.short_uni("V16"), v3_state(elsize=aligned.itemsize, flags=144))
    data = joblib_file(wrapper((2,), v, aligned=True), b"\x0a" + b"\xff" * 10 + np.zeros(2, aligned).tobytes())
    assert findings(data) == []


def test_torch_and_numpy_readers_get_no_joblib_reading() -> None:
    # Only joblib.load's unpickler reads array bytes: nothing here is reported for joblib.
    data = joblib_file(wrapper((1,), op.glob("numpy", "float64")), op.NONE * 0)
    assert "joblib-array-unsized" not in {f.rule for f in findings(data, mode=ReadMode(joblib=False))}


def walk(data: bytes) -> list[Finding]:
    sink = FindingSink("model.joblib", "hfvet-pickle")
    ContainerWalker(sink, Limits()).scan(BytesBlob(data), detect_format(data[:HEAD_BYTES], len(data)))
    return sink.findings


def test_raw_lzma_joblib_file_is_decompressed() -> None:
    # compressor.py: joblib's 'lzma' compressor writes FORMAT_ALONE, magic b"\x5d\x00".
    assert CRITICAL in pairs(walk(lzma.compress(hostile.by_protocol(4), format=lzma.FORMAT_ALONE)))


def test_lz4_joblib_file_is_never_merely_unrecognized() -> None:
    # joblib reads lz4 frames when the lz4 package is installed; hfvet has no lz4 decoder.
    found = walk(b"\x04\x22\x4d\x18" + b"\x00" * 64)
    assert ("container-unreadable", "high") in pairs(found)


def test_corrupt_lzma_is_unreadable_not_unknown() -> None:
    good = lzma.compress(hostile.by_protocol(4), format=lzma.FORMAT_ALONE)
    assert ("container-unreadable", "high") in pairs(walk(good[:20] + b"\x00" * 40))


@pytest.mark.parametrize("compress", [True, False])
def test_both_readings_of_a_compressed_or_raw_file(compress: bool) -> None:
    # zlib makes the payload a forward-only stream: the joblib reading is replayed from a
    # recording of the bytes after the first wrapper; a raw file is re-read by seeking.
    # pickle.load runs the array bytes (posix.system) and then what follows (nt.system);
    # joblib.load steps over the array bytes and runs only what follows.
    hidden = HIDDEN + op.NONE * (-len(HIDDEN) % 8)
    then = op.glob("nt", "system") + op.uni(op.PAYLOAD) + op.TUPLE1 + op.REDUCE + op.POP
    then += op.binbytes(b"\x00" * 8192) + op.POP  # longer than the sniff head: no in-memory copy
    data = joblib_file(wrapper((len(hidden) // 8,), dtype(op.short_uni("f8"))), hidden + then)
    found = walk(zlib.compress(data, 3) if compress else data)
    assert sorted(f.evidence for f in found if f.rule == CRITICAL[0]) == [
        "joblib.load reading: nt.system", "pickle.load reading: nt.system", "pickle.load reading: posix.system"]


def test_array_bytes_inside_a_frame_come_from_after_the_frame() -> None:
    # pickle._Unframer.load_frame reads a whole FRAME from the file; read_array reads the
    # array from the file itself, so with opcodes left in the frame after the wrapper's BUILD
    # the array bytes start after the frame, and the frame's tail runs before the code that
    # follows them. pickle.load breaks on the array bytes (\xff): only joblib runs the call.
    head = op.EMPTY_DICT + op.MARK + op.short_uni("w") + wrapper((1,), dtype(op.short_uni("f8")))
    tail = op.short_uni("k") + op.short_uni("v") * 3 + op.POP * 2
    data = (op.proto(4) + op.frame(head + tail) + b"\xff" * 8 + HIDDEN
            + op.short_uni("n") + op.binint1(5) + op.SETITEMS + op.STOP)
    assert [f.evidence for f in findings(data) if f.rule == CRITICAL[0]] == ["joblib.load reading: posix.system"]


def test_a_nested_pickle_frame_is_consumed_whole() -> None:
    # The nested Unpickler also reads its last frame whole: bytes in it after its STOP are
    # gone from the file, and the outer pickle goes on after the frame.
    swallowed = op.STOP + b"\xff" * 7  # after the nested STOP, still in its frame
    inner = op.proto(4) + op.frame(op.EMPTY_LIST + swallowed)
    data = joblib_file(wrapper((1,), dtype(op.short_uni("O8"))), inner + HIDDEN)
    assert CRITICAL in pairs(findings(data))
    assert ("pickle-broken-stream", "high") not in pairs(findings(data))


def zfile(body: bytes, space: bool = False) -> bytes:
    """numpy_pickle_compat.write_zfile: "ZF", hex length padded to 19, zlib data."""
    return b"ZF" + hex(len(body)).encode().ljust(19) + (b" " if space else b"") + zlib.compress(body, 1)


@pytest.mark.parametrize("space", [False, True])
def test_old_zfile_container_is_decompressed_and_walked(space: bool) -> None:
    # joblib.load -> _detect_compressor "compat" -> load_compatibility -> read_zfile.
    assert CRITICAL in pairs(walk(zfile(hostile.by_protocol(2), space)))


def test_zfile_reader_knows_side_files_but_not_in_stream_arrays() -> None:
    # ZipNumpyUnpickler.load_build swaps only NDArrayWrapper: a NumpyArrayWrapper's "array
    # bytes" are opcodes to it, as to pickle.load.
    side = (op.glob("joblib.numpy_pickle", "NDArrayWrapper") + op.EMPTY_TUPLE + op.NEWOBJ + op.EMPTY_DICT
            + op.short_uni("filename") + op.short_uni("/abs/x.npy") + op.SETITEM + op.BUILD + op.POP)
    hidden = HIDDEN + op.NONE * (-len(HIDDEN) % 8)
    body = joblib_file(side + wrapper((len(hidden) // 8,), dtype(op.short_uni("f8"))), hidden)
    found = walk(zfile(body))
    assert ("joblib-side-file", "high") in pairs(found)
    # The catalog already calls any joblib global but NumpyArrayWrapper dangerous; the call is
    # seen once, by the one reading there is (no "reading:" tag: nothing forked).
    assert "posix.system" in [f.evidence for f in found if f.rule == CRITICAL[0]]


def test_corrupt_zfile_is_unreadable() -> None:
    assert ("container-unreadable", "high") in pairs(walk(zfile(hostile.by_protocol(2))[:30] + b"\x00" * 30))


def test_a_wrapper_made_some_other_way_is_still_a_wrapper() -> None:
    # load_build checks isinstance(stack[-1], NumpyArrayWrapper), not how it was made:
    # functools.partial(NumpyArrayWrapper)() is one, and hfvet cannot say what it holds.
    made = op.call(op.glob("functools", "partial"), WRAPPER) + op.EMPTY_TUPLE + op.REDUCE
    data = joblib_file(made + op.EMPTY_DICT + op.BUILD, b"\xff" * 8 + HIDDEN)
    assert ("joblib-array-unsized", "high") in pairs(findings(data))


def test_copyreg_newobj_wrapper_gets_no_init_attributes() -> None:
    # copyreg.__newobj__(cls) is cls.__new__(cls): no __init__, so no default alignment.
    made = op.call(op.glob("copyreg", "__newobj__"), WRAPPER)
    items = op.short_uni("shape") + op.binint1(1) + op.TUPLE1 + op.short_uni("dtype") + dtype(op.short_uni("f8"))
    data = joblib_file(made + op.EMPTY_DICT + op.MARK + items + op.SETITEMS + op.BUILD, b"\xff" * 8 + HIDDEN)
    # (the catalog calls copyreg.__newobj__ itself dangerous too; the point is the array size)
    assert "joblib.load reading: posix.system" in [f.evidence for f in findings(data) if f.rule == CRITICAL[0]]


def test_a_state_dict_longer_than_the_analysis_keeps_is_not_guessed() -> None:
    # The machine keeps 128 dict entries: a "dtype" key past them would be missed.
    junk = b"".join(op.short_uni(f"k{i}") + op.NONE for i in range(130))
    made = WRAPPER + op.EMPTY_TUPLE + op.NEWOBJ + op.EMPTY_DICT + op.MARK + junk + op.SETITEMS + op.BUILD
    assert ("joblib-array-unsized", "high") in pairs(findings(joblib_file(made, b"")))


class _Wrapper:
    """Stands in for joblib's NumpyArrayWrapper so pickle writes the stream joblib.dump writes."""


def _as_joblib_writes(array: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """{'w': wrapper, 'n': 5} pickled with its memo as joblib's pickler writes it, the object
    array's own pickle (protocol 5, as write_array) right after the wrapper's BUILD."""
    package, module = types.ModuleType("joblib"), types.ModuleType("joblib.numpy_pickle")
    _Wrapper.__module__, _Wrapper.__qualname__ = "joblib.numpy_pickle", "NumpyArrayWrapper"
    module.NumpyArrayWrapper = _Wrapper  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "joblib", package)
    monkeypatch.setitem(sys.modules, "joblib.numpy_pickle", module)
    wrapper_ = _Wrapper()
    wrapper_.__dict__.update(subclass=np.ndarray, shape=array.shape, order="C", dtype=array.dtype,
                             allow_mmap=False, numpy_array_alignment_bytes=16)
    outer = pickle.dumps({"w": wrapper_, "n": 5}, protocol=3)  # protocol 3: no frames to commit
    build = max(pos for opcode, _, pos in pickletools.genops(outer) if opcode.name == "BUILD")
    return outer[: build + 1] + pickle.dumps(array, protocol=5) + outer[build + 1 :]


def test_benign_object_array_is_clean_though_pickle_load_reads_it_as_garbage(monkeypatch: pytest.MonkeyPatch) -> None:
    # pickle.load reads the nested pickle inline: its GETs land on the outer memo, so it
    # "imports" subclass.dtype and calls strings before it breaks. None of it was written
    # as a name; nothing of it is reported.
    data = _as_joblib_writes(np.array([1, "a", None, np.arange(3)], dtype=object), monkeypatch)
    assert findings(data) == []


def test_hidden_stack_global_of_its_own_strings_is_kept_though_the_reading_breaks() -> None:
    # A payload in the array bytes that names an unknown callable with its own strings, then
    # breaks pickle.load on purpose (the call already ran).
    own = (op.short_uni("evilpkg") + op.MEMOIZE + op.short_uni("apply_model") + op.MEMOIZE + op.STACK_GLOBAL
           + op.short_uni("x") + op.TUPLE1 + op.REDUCE + b"\xff")
    hidden = own + b"\x00" * (-len(own) % 8)
    found = findings(joblib_file(wrapper((len(hidden) // 8,), dtype(op.short_uni("f8"))), hidden))
    assert ("pickle-unknown-call", "high") in pairs(found)


def test_hidden_names_fetched_back_from_its_own_memo_count_too() -> None:
    own = (op.short_uni("evilpkg") + op.binput(200) + op.short_uni("apply_model") + op.binput(201) + op.POP + op.POP
           + op.binget(200) + op.binget(201) + op.STACK_GLOBAL + op.EMPTY_TUPLE + op.REDUCE + b"\xff")
    hidden = own + b"\x00" * (-len(own) % 8)
    found = findings(joblib_file(wrapper((len(hidden) // 8,), dtype(op.short_uni("f8"))), hidden))
    assert ("pickle-unknown-call", "high") in pairs(found)
