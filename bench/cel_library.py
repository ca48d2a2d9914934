"""Issue 26: could a compiled CEL library replace the fast path (fastcel.py) and its celpy fallback?

    pip install common-expression-language==0.10.0   # not a dependency of hfvet; this script only
    python bench/cel_library.py [--budget 3] [--rounds 3] [--out FILE]

The candidate runs every `when` through `cel` (common-expression-language, Rust-backed) over the same
plain activation the fast path reads, behind hfvet's own `run_bool` contract (a bool or CelEvalError,
which the engine turns into fail closed). Three questions, in one run:

1. Expressions: the fast path's differential lists in tests/unit/core/policy/test_fastcel.py
   (ANSWERED, UNSURE, UNSUPPORTED), the library's answer beside celpy's (the judge of today's
   language). An error on either side counts as "error" (the rule fails closed); anything else must be
   the same bool.
2. Decisions: every shipped policy test case and the differential's 2 x 25 random reports, decided
   with the library for every rule and with celpy alone: decision, per-rule status and detail.
3. Speed: `evaluate(policy, facts)` for bench_policy.py's 100-file/100-finding report, default and
   strict, third-party and vendor, alternating current (fastcel, celpy fallback), library (the
   activation converted at each rule, as `Program.execute(dict)` does) and library with one
   `cel.Context` per decision; medians of `--rounds` x `--budget` seconds per row, and ratios. Then
   the same for the rules alone (every `when` on a prebuilt activation, fresh per decision): the
   part the evaluator owns, without identity, waivers, facts-to-variables and the floor.
"""

from __future__ import annotations

import random
import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from bench_policy import report_facts, timed_calls  # noqa: E402
from benchlib import emit, machine_info, make_parser, table  # noqa: E402

RunBool = Callable[[Any, Any], bool]


@lru_cache(maxsize=1024)
def _library_program(expr: str) -> Any:
    import cel

    return cel.compile(expr)


def _library_result(program: Any, variables: Any) -> bool:
    from app.core.policy.cel import CelEvalError

    try:
        result = program.execute(variables)
    except Exception as exc:  # the library raises ValueError/RuntimeError/TypeError: all fail closed
        raise CelEvalError(f"{type(exc).__name__}: {str(exc)[:300]}") from exc
    if type(result) is not bool:
        raise CelEvalError(f"`when` must give a bool, got {type(result).__name__}")
    return result


def library_run_bool(program: Any, activation: Any) -> bool:
    """hfvet's run_bool contract, every rule by the library, the activation converted per rule."""
    return _library_result(_library_program(program.source), activation.plain)


def library_context_run_bool(program: Any, activation: Any) -> bool:
    """The same, with one cel.Context per decision (converted once, shared by the rules)."""
    import cel

    context = activation.__dict__.get("_library_context")
    if context is None:
        context = activation.__dict__["_library_context"] = cel.Context(variables=activation.plain)
    return _library_result(_library_program(program.source), context)


@contextmanager
def evaluator(run_bool: RunBool | None) -> Iterator[None]:
    """The engine's rules run by ``run_bool`` (None: today's fast path and celpy fallback)."""
    from app.core.policy import engine

    saved = engine.run_bool
    engine.run_bool = run_bool or saved
    try:
        yield
    finally:
        engine.run_bool = saved


def _outcome(value: Any) -> str:
    import celpy.celtypes

    if isinstance(value, BaseException) or type(value).__name__ == "CELEvalError":
        return "error"
    if isinstance(value, (bool, celpy.celtypes.BoolType)):
        return str(bool(value)).lower()
    return f"non-bool {type(value).__name__}"


def expression_rows() -> tuple[list[list[str]], int]:
    from tests.unit.core.policy.test_fastcel import ANSWERED, UNSUPPORTED, UNSURE, _activation, _celpy

    rows, total = [], 0
    for group, exprs in (("ANSWERED", ANSWERED), ("UNSURE", UNSURE), ("UNSUPPORTED", UNSUPPORTED)):
        for expr in exprs:
            total += 1
            activation = _activation()
            try:
                library: Any = _library_program(expr).execute(activation.plain)
            except Exception as exc:  # noqa: BLE001 - an error is one of the library's answers
                library = exc
            ours, theirs = _outcome(_celpy(expr, activation)), _outcome(library)
            if ours != theirs:
                detail = f"{type(library).__name__}: {str(library)[:70]}" if isinstance(library, Exception) else ""
                rows.append([group, f"`{expr}`", ours, theirs, detail])
    return rows, total


def decision_differences() -> tuple[int, int, list[str]]:
    from app.core.policy import LoadedPolicy, PolicyFacts, explain, load_policy
    from app.core.policy.cases import discover, load_case, policy_path_for
    from tests.unit.core.policy.test_fastcel import _random_facts

    def celpy_only(policy: LoadedPolicy) -> LoadedPolicy:
        return replace(policy, programs={k: replace(p, fast=None) for k, p in policy.programs.items()})

    def summary(policy: LoadedPolicy, facts: PolicyFacts, today: Any) -> Any:
        result = explain(policy, facts, today=today)
        return result.decision, [(r.rule.id, r.status, r.detail) for r in result.results]

    inputs: list[tuple[str, LoadedPolicy, PolicyFacts, Any]] = []
    for path in discover(Path("policies") / "tests"):
        case = load_case(path)
        inputs.append((f"{path.parent.name}/{path.stem}", load_policy(policy_path_for(path, case)), case.input,
                       case.today))
    for name in ("default", "strict"):
        policy, rng = load_policy(Path("policies") / f"{name}.yaml"), random.Random(13)
        inputs += [(f"{name} random {i}", policy, _random_facts(rng), None) for i in range(25)]
    different = []
    for label, policy, facts, today in inputs:
        slow = summary(celpy_only(policy), facts, today)
        with evaluator(library_run_bool):
            library = summary(policy, facts, today)
        if library != slow:
            different.append(label)
    return len(inputs), len(different), different


def _calls(policy: Any, facts: Any, rules_only: bool, run_bool: RunBool | None) -> Callable[[], str]:
    from app.core.policy import engine, evaluate
    from app.core.policy.cel import Activation

    if not rules_only:
        return lambda: evaluate(policy, facts).verdict.value
    plain, rules = engine._context(policy, facts, None).activation.plain, policy.model.rules
    run = run_bool or engine.run_bool

    def all_rules() -> str:
        activation = Activation(plain)  # fresh: a decision converts its variables once
        return str(sum(run(policy.programs[rule.id], activation) for rule in rules)) + " fired"
    return all_rules


def speed_rows(budget: float, rounds: int, rules_only: bool) -> list[list[str]]:
    from app.core.policy import facts_from_report_dict, load_policy

    candidates: dict[str, RunBool | None] = {"fastcel": None, "library": library_run_bool,
                                             "library + Context": library_context_run_bool}
    rows = []
    for name in ("default", "strict"):
        policy = load_policy(Path("policies") / f"{name}.yaml")
        for repo in ("canada-quant/Model-FP8", "nvidia/Model-FP8"):
            facts = facts_from_report_dict(report_facts(repo))
            walls: dict[str, list[float]] = {label: [] for label in candidates}
            verdicts: dict[str, set[str]] = {label: set() for label in candidates}
            for _ in range(rounds):  # alternating, so load on the machine hits all three alike
                for label, run_bool in candidates.items():
                    with evaluator(run_bool):
                        call = _calls(policy, facts, rules_only, run_bool)
                        verdict, times, _cpu = timed_calls(call, budget / rounds)
                    walls[label] += times
                    verdicts[label].add(verdict)
            base = statistics.median(walls["fastcel"])
            for label in candidates:
                median = statistics.median(walls[label])
                rows.append([name, repo, label, "/".join(sorted(verdicts[label])), str(len(walls[label])),
                             f"{median * 1e3:,.2f}", f"{median / base:.2f}x"])
    return rows


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--budget", type=float, default=3.0, help="seconds of decisions per evaluator and row")
    parser.add_argument("--rounds", type=int, default=3, help="alternations per row")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if find_spec("cel") is None:
        raise SystemExit("needs the library: pip install common-expression-language==0.10.0")
    expr_rows, expr_total = expression_rows()
    cases, different, labels = decision_differences()
    speed = speed_rows(args.budget, max(1, args.rounds), rules_only=False)
    rules = speed_rows(args.budget, max(1, args.rounds), rules_only=True)
    emit("\n".join([
        machine_info(["cel-python", "common-expression-language", "pydantic"]), "",
        f"Expressions of test_fastcel.py where the library and celpy disagree: {len(expr_rows)} of {expr_total}",
        "", table(["list", "expression", "celpy", "library", "library says"], expr_rows), "",
        f"Decisions (policy test cases + random reports): {different} of {cases} differ"
        + (f": {', '.join(labels)}" if labels else " (decision, every rule's status and detail)"), "",
        "`evaluate(policy, facts)`, 100 files / 100 findings, policy loaded once:", "",
        table(["policy", "repo", "evaluator", "verdict", "decisions", "median wall ms", "vs fastcel"], speed), "",
        "The rules alone (every `when` of the policy on one prebuilt activation, fresh per decision):", "",
        table(["policy", "repo", "evaluator", "rules fired", "decisions", "median wall ms", "vs fastcel"], rules),
    ]), args.out)


if __name__ == "__main__":
    main()
