"""The pickle evaluator bounds every helper's output before running it (issue 22, item 8).

Hostile samples reproduce CPython's ``pickle._Unpickler.load_reduce`` (``stack[-1] = func(*args)``):
the load really calls ``str.replace``/``str.join`` on the pickled constants, so a real load of
these streams would allocate what they ask for; hfvet must judge them without doing so.
"""

from __future__ import annotations

import io
import tracemalloc

import pytest

from app.core.findings import FindingSink
from app.core.limits import Limits
from app.core.scanners.pickle_engine.analysis import analyze_pickles
from app.core.scanners.pickle_engine.evaluate import MAX_EVALUATED, MAX_RESULT, EvalBudget, evaluate, output_bound
from app.core.scanners.pickle_engine.values import Const, TupleVal
from tests.samples import opcodes as op

BIG = "a" * (64 * 1024)  # the longest string a pickle constant may carry (Limits.max_string_arg)
REPLACE = op.glob("builtins", "str.replace")


def findings(data: bytes) -> set[tuple[str, str]]:
    sink = FindingSink("f.pkl", "hfvet-pickle")
    analyze_pickles(io.BytesIO(data), sink, Limits())
    return {(f.rule, f.severity.value) for f in sink.findings}


def judged_within(data: bytes, monkeypatch: pytest.MonkeyPatch, max_bytes: int,
                  max_runs: int) -> set[tuple[str, str]]:
    """The findings, judged in under ``max_bytes`` of memory running at most ``max_runs`` helpers (whose
    results together stay within the stream's evaluation budget)."""
    spent: list[int] = []
    spend = EvalBudget.spend

    def counted(budget: EvalBudget, size: int) -> None:
        spent.append(size)
        spend(budget, size)

    monkeypatch.setattr(EvalBudget, "spend", counted)
    tracemalloc.start()
    try:
        found = findings(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < max_bytes, f"peak {peak / 1e6:.1f} MB"
    assert len(spent) <= max_runs and sum(spent) <= MAX_EVALUATED, spent
    return found


def test_replace_bound_is_exact() -> None:
    values: list[object] = ["abcabc", "b", "xyz"]
    assert output_bound("builtins.str.replace", values) == len("abcabc".replace("b", "xyz"))
    assert output_bound("builtins.str.replace", ["ab", "", "--"]) == len("ab".replace("", "--"))
    assert output_bound("builtins.str.replace", ["aaaa", "a", "bb", 1]) == len("aaaa".replace("a", "bb", 1))


def test_join_bound_counts_the_separators() -> None:
    assert output_bound("builtins.str.join", ["--", ["a", "b", "c"]]) == len("--".join(["a", "b", "c"]))
    assert output_bound("builtins.str.join", ["--", "abc"]) == len("--".join("abc"))


def test_a_gigabyte_replace_is_never_run() -> None:
    # 65,536 matches x 65,535 extra characters: ~4 GiB if Python ran it.
    args = TupleVal((Const(BIG), Const("a"), Const(BIG)))
    tracemalloc.start()
    try:
        assert evaluate("builtins.str.replace", args) is None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024


def test_a_join_of_a_long_string_with_a_long_separator_is_never_run() -> None:
    assert evaluate("builtins.str.join", TupleVal((Const(BIG), Const(BIG)))) is None


def test_small_helpers_still_fold() -> None:
    result = evaluate("builtins.str.replace", TupleVal((Const("oXs"), Const("X"), Const(""))))
    assert result is not None and result.value == "os"


def test_one_stream_evaluates_a_bounded_total() -> None:
    budget = EvalBudget(3 * MAX_RESULT)
    quarter = "a" * (MAX_RESULT // 4)
    grown = [evaluate("builtins.str.replace", TupleVal((Const(quarter), Const("a"), Const("aaaa"))), budget)
             for _ in range(5)]
    assert [g is not None for g in grown] == [True, True, True, False, False]


def test_a_chained_replace_pickle_is_judged_in_bounded_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    # replace(replace(BIG, "a", BIG), ...) as the module name of an import, then os.system:
    # the name is unknown (never computed), so the import is unresolved; the call is still seen.
    inner = op.call(REPLACE, op.uni(BIG), op.uni("a"), op.uni(BIG))
    outer = op.call(REPLACE, inner, op.uni("b"), op.uni(BIG))
    name_import = outer + op.uni("system") + op.STACK_GLOBAL + op.MARK + op.uni(op.PAYLOAD) + op.TUPLE + op.REDUCE
    system = op.call(op.glob("posix", "system"), op.uni(op.PAYLOAD))
    data = op.proto(4) + name_import + op.POP + system + op.STOP
    found = judged_within(data, monkeypatch, max_bytes=50 * 1024 * 1024, max_runs=0)  # neither replace runs
    assert ("pickle-unresolved-global", "critical") in found
    assert ("pickle-dangerous-global", "critical") in found


def test_many_megabyte_results_do_not_pile_up(monkeypatch: pytest.MonkeyPatch) -> None:
    # 200 calls each growing BIG to 1 MiB ("a" -> 16 x "a"), all kept in one list: 200 MiB if
    # every one were evaluated; the stream's evaluation budget stops after a few.
    grow = op.call(REPLACE, op.binget(0), op.uni("a"), op.uni("a" * 16))
    body = op.uni(BIG) + op.binput(0) + op.POP + op.EMPTY_LIST + op.MARK + grow * 200 + op.APPENDS
    data = op.proto(4) + body + op.POP + op.call(op.glob("posix", "system"), op.uni(op.PAYLOAD)) + op.STOP
    found = judged_within(data, monkeypatch, max_bytes=50 * 1024 * 1024, max_runs=MAX_EVALUATED // MAX_RESULT)
    assert ("pickle-dangerous-global", "critical") in found
