"""The fast opcode loop against the general one: same findings, counts and failure points.

``fast_loop`` parses the common opcodes in place and hands every other case to the general
path (``_Analyzer._step``, handed to ``fast_loop.run`` as ``step``). Each sample here is walked
three ways: as shipped, with the fast loop switched off, and with a 7-byte window (so that nearly
every argument straddles a window edge); all three must agree on every field of every finding.
"""

from __future__ import annotations

import base64
import gc
import io
import pickle
import pickletools
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator

import pytest

from app.core.findings import FindingSink
from app.core.formats.blobs import BytesBlob
from app.core.formats.detect import Format
from app.core.limits import Limits
from app.core.scanners.pickle_engine import analysis, fast_loop, gc_pause, nested, reader
from app.core.scanners.pickle_engine.calls import _holds_unsafe_global, _is_safe_callable
from app.core.scanners.pickle_engine.values import OPAQUE, Const, DictVal, GlobalRef, ListVal, TupleVal, Value, leaves
from app.core.scanners.pickle_engine.walker import ContainerWalker
from app.examples.pickles import TorchTensor, state_dict_pickle
from tests.samples import hostile
from tests.samples import opcodes as op

Outcome = tuple[int, int, tuple[str, ...], bool, bool, tuple[tuple[str, str, str, str | None, str], ...]]
Walk = Callable[..., Outcome]


def _outcome(data: bytes, limits: Limits, **kwargs: object) -> Outcome:
    sink = FindingSink("f.pkl", "hfvet-pickle")
    result = analysis.analyze_pickles(io.BytesIO(data), sink, limits, **kwargs)  # type: ignore[arg-type]
    found = tuple((f.rule, f.severity.value, f.message, f.member, f.evidence) for f in sink.findings)
    return result.pickles, result.opcodes, tuple(result.imports), result.broken, result.limit_hit, found


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> Iterator[Walk]:
    def three(data: bytes, limits: Limits | None = None, **kwargs: object) -> Outcome:
        limits = limits or Limits()
        shipped = _outcome(data, limits, **kwargs)
        with monkeypatch.context() as patch:
            patch.setattr(fast_loop, "run", lambda state, machine, rd, step: False)
            general = _outcome(data, limits, **kwargs)
        with monkeypatch.context() as patch:
            patch.setattr(reader, "WINDOW", 7)
            narrow = _outcome(data, limits, **kwargs)
        assert shipped == general
        assert narrow == general
        return shipped

    yield three


def _torch_state_dict(tensors: int, memoized: bool) -> bytes:
    """A torch.save-like state dict: with the memo (BINPUT/BINGET) as torch writes it, or without."""
    if not memoized:
        return state_dict_pickle([TorchTensor(f"layer.{i}.weight", "BF16", (4, 8), str(i)) for i in range(tensors)])
    w = op.proto(2) + op.glob("collections", "OrderedDict") + op.binput(0) + b")R" + op.binput(1) + b"("
    for i in range(tensors):
        w += op.uni(f"model.layers.{i}.self_attn.q_proj.weight") + b"r" + (i + 2).to_bytes(4, "little")
        w += op.glob("torch._utils", "_rebuild_tensor_v2") if i == 0 else op.binget(2 if i else 0)
        w += b"((" + op.uni("storage") + op.glob("torch", "BFloat16Storage") + op.uni(str(i)) + op.uni("cpu")
        w += b"M\x00\x01tQK\x00K\x10K\x10\x86K\x10K\x01\x86\x89" + op.glob("collections", "OrderedDict") + b")RtR"
    return w + b"u."


SAMPLES = {
    "torch memoized": _torch_state_dict(40, memoized=True),
    "torch plain": _torch_state_dict(40, memoized=False),
    "torch with payload": state_dict_pickle(
        [TorchTensor(f"w{i}", "F32", (2, 3), str(i)) for i in range(20)], payload=("posix", "system", op.PAYLOAD)),
    "memo stack global": hostile.memo_stack_global(),
    "runtime names": hostile.runtime_names(),
    "inst": hostile.inst_call(),
    "obj": hostile.obj_call(),
    "nested loads": hostile.nested_loads(),
    "broken after payload": hostile.broken_after_payload(),
    "truncated payload": hostile.truncated_payload(),
    "broken second pickle": hostile.broken_second_pickle(),
    "importlib chain": hostile.importlib_chain(),
    "build slot injection": hostile.build_slot_injection(),
    "dict get builtins": hostile.dict_get_builtins(),
    "ext code": hostile.ext_code(),
    "setitem on global": hostile.setitem_on_global(),
    "joblib object array": hostile.joblib_object_array_payload(),
    **{f"payload p{p}": hostile.by_protocol(p) for p in range(6)},
    **{f"benign p{p}": pickle.dumps(
        {"a": [1, (2, "x" * 20)], "b": {1, 2}, "c": frozenset([3]), "d": b"raw" * 9, "e": bytearray(b"q"),
         "f": 1.5, "g": OrderedDict(k=[None, True, False, -7, 70000, 2**40]), "h": ("t",) * 3},
        protocol=p) for p in range(6)},
}


@pytest.mark.parametrize("name", SAMPLES)
def test_every_sample_walks_the_same(walks: Walk, name: str) -> None:
    walks(SAMPLES[name])


@pytest.mark.parametrize("name", ["torch memoized", "torch with payload", "memo stack global", "payload p4"])
def test_every_truncation_fails_at_the_same_point(walks: Walk, name: str) -> None:
    data = SAMPLES[name]
    for end in range(0, len(data), max(1, len(data) // 120)):
        walks(data[:end])


@pytest.mark.parametrize("name", ["torch memoized", "torch with payload", "payload p2"])
def test_corrupted_bytes_break_the_same_way(walks: Walk, name: str) -> None:
    data = bytearray(SAMPLES[name])
    for position in range(2, len(data), max(1, len(data) // 60)):
        for value in (0x00, 0x71, 0x2E, 0xFF):  # NUL (no opcode), BINPUT, STOP, no opcode
            corrupted = bytearray(data)
            corrupted[position] = value
            walks(bytes(corrupted))


def test_a_missing_memo_key_is_the_general_path_finding(walks: Walk) -> None:
    data = op.proto(2) + op.binint1(1) + op.binput(0) + op.binget(5) + b"."
    outcome = walks(data)
    assert outcome[3] and "memo key 5 not found at offset 6" in outcome[5][0][2]


@pytest.mark.parametrize("limit", [1, 2, 17, 300, 1000])
def test_the_opcode_budget_stops_at_the_same_opcode(walks: Walk, limit: int) -> None:
    data = SAMPLES["torch memoized"]
    total = sum(1 for _ in pickletools.genops(data))
    _, opcodes, _, _, limit_hit, found = walks(data, Limits(max_pickle_opcodes=limit))
    assert limit_hit == (limit < total) and opcodes == min(total, limit + (limit < total))
    assert any(f[0] == "limit-exceeded" for f in found) == (limit < total)


def test_long_arguments_still_go_the_general_way(walks: Walk) -> None:
    text = "os.system " + "x" * 300
    data = op.proto(2) + op.uni(text) + b"0" + op.uni("y" * 40) + b"0" + hostile.by_protocol(2)[2:]
    outcome = walks(data, Limits(max_string_arg=100))
    assert ("pickle-dangerous-global", "critical") in {(f[0], f[1]) for f in outcome[5]}


def test_the_fast_loop_takes_nearly_every_opcode(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _torch_state_dict(2000, memoized=True)
    general = 0
    step = analysis._Analyzer._step

    def counted(self: analysis._Analyzer, machine: object, rd: object) -> bool:
        nonlocal general
        general += 1
        return step(self, machine, rd)  # type: ignore[arg-type]

    monkeypatch.setattr(analysis._Analyzer, "_step", counted)
    _, opcodes, *_ = _outcome(data, Limits())
    assert opcodes == sum(1 for _ in pickletools.genops(data)) > 40_000
    assert general < 20  # PROTO, the last bytes of each window, STOP


def test_the_walker_hands_on_the_opcode_count_of_each_stream() -> None:
    pkl = _torch_state_dict(30, memoized=True)
    data = op.zip_bytes({"archive/data.pkl": pkl, "archive/byteorder": b"little", "archive/version": b"3\n"})
    walker = ContainerWalker(FindingSink("m.bin", "hfvet-pickle"), Limits())
    walker.scan(BytesBlob(data), Format.PYTORCH_ZIP, "m.bin")
    counts = {c.member: (c.opcodes, c.complete) for c in walker.opcode_counts}
    assert counts["archive/data.pkl"] == (sum(1 for _ in pickletools.genops(pkl)), True)
    assert counts["archive/byteorder"] == (1, False)  # "little" is walked leniently: LIST, then a break
    assert walker.opcodes == sum(n for n, _ in counts.values())


def test_a_stream_cut_short_is_counted_as_incomplete() -> None:
    walker = ContainerWalker(FindingSink("m.pkl", "hfvet-pickle"), Limits())
    walker.scan(BytesBlob(hostile.truncated_payload()), Format.PICKLE, "m.pkl")
    assert [c.complete for c in walker.opcode_counts] == [False]
    assert walker.opcodes > 0


def test_the_collector_pause_is_shared_and_restores_the_collector() -> None:
    assert gc.isenabled()
    seen: list[bool] = []
    inside = threading.Event()
    release = threading.Event()

    def other_walk() -> None:
        with gc_pause.collector_paused():
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=other_walk)
    with gc_pause.collector_paused():
        seen.append(gc.isenabled())
        thread.start()
        inside.wait(5)
    seen.append(gc.isenabled())  # the other walk still runs: still paused
    release.set()
    thread.join(5)
    seen.append(gc.isenabled())
    assert seen == [False, False, True]


def test_a_collector_off_before_the_walk_stays_off() -> None:
    gc.disable()
    try:
        with gc_pause.collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


CONSTANTS = [
    b"model.layers.12.self_attn.q_proj.weight", b"feature_00017", b"0123456789abcdef" * 4, b"x" * 40,
    hostile.by_protocol(2), pickle.dumps([1, 2, 3]) * 3, hostile.by_protocol(0),
    base64.b64encode(hostile.by_protocol(2)), hostile.by_protocol(2).hex().encode(),
    zlib.compress(hostile.by_protocol(2)), bytes(range(256)), b"\x80\x05" + b"\x00" * 30,
]


@pytest.mark.parametrize("data", CONSTANTS)
def test_cannot_hold_pickle_only_rules_out_what_the_walk_finds_nothing_in(data: bytes) -> None:
    if nested.cannot_hold_pickle(data[:256]):
        assert list(nested.inner_pickles(data, 1 << 20)) == []
        assert not nested.starts_like_inner(data[:256])


def test_cannot_hold_pickle_keeps_encoded_pickles() -> None:
    encoded = [c for c in CONSTANTS if list(nested.inner_pickles(c, 1 << 20))]
    assert len(encoded) >= 4 and not any(nested.cannot_hold_pickle(c[:256]) for c in encoded)
    assert nested.cannot_hold_pickle(CONSTANTS[0])


_OS = GlobalRef("os", "system")
_SAFE = GlobalRef("collections", "OrderedDict")
VALUES: list[Value] = [
    TupleVal((OPAQUE, Const(0), TupleVal((Const(1), Const(2))), Const(False))),
    TupleVal((_SAFE, ListVal([_SAFE]))),
    TupleVal((_OS,)),
    TupleVal((TupleVal((TupleVal((TupleVal((_OS,)),)),)),)),  # at depth 4
    TupleVal((TupleVal((TupleVal((TupleVal((TupleVal((_OS,)),)),)),)),)),  # at depth 5
    ListVal([DictVal({"k": TupleVal((_OS,))})]),
    DictVal({}, [_OS, Const(1)]),
]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("depth", [0, 1, 3, 4, 5])
def test_the_unsafe_global_pretest_agrees_with_leaves(value: Value, depth: int) -> None:
    expected = any(isinstance(leaf, GlobalRef) and not _is_safe_callable(leaf)
                   for leaf in leaves(value, max_depth=depth))
    assert _holds_unsafe_global(value, depth) == expected
