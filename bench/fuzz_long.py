"""The long fuzz run, outside the suite: each target of tests/fuzz/targets.py for N minutes.

Hypothesis with the "long" profile (random seeds), in rounds of `max_examples` until the time
is up; coverage.py measures line coverage of each target's modules over the whole run. Prints,
per target: executions, rounds, wall and CPU seconds, coverage (cumulative over the run), and every failure found (with
the input hypothesis shrank it to). atheris 3.1.0 is not installable here, hence hypothesis.

    PYTHONPATH=. .venv/bin/python bench/fuzz_long.py --minutes 2 [--target NAME ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ["HFVET_FUZZ_PROFILE"] = "long"  # read when tests.fuzz.harness is imported
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import coverage  # noqa: E402

# Started before hfvet is imported, so that import-time lines (definitions) count as run.
COVERAGE = coverage.Coverage(include=[str(ROOT / "app" / "*")], data_file=None)
COVERAGE.start()

from hypothesis import given  # noqa: E402

from tests.fuzz.harness import FUZZ  # noqa: E402
from tests.fuzz.targets import TARGETS, Target  # noqa: E402


def run_target(target: Target, seconds: float) -> dict[str, Any]:
    files = [str(ROOT / m) for m in target.modules]
    count, rounds, failures = [0], 0, []

    @FUZZ
    @given(target.strategy)
    def once(value: Any) -> None:
        count[0] += 1
        target.check(value)

    wall, cpu = time.monotonic(), time.process_time()
    while time.monotonic() - wall < seconds:
        rounds += 1
        try:
            once()
        except Exception as exc:  # noqa: BLE001 - a failure is a result to print, not the end of the run
            failures.append(f"{type(exc).__name__}: {str(exc)[:2000]}")
    return {"target": target.name, "executions": count[0], "rounds": rounds,
            "wall_s": time.monotonic() - wall, "cpu_s": time.process_time() - cpu,
            "coverage": _coverage(files), "failures": failures}


def _coverage(files: list[str]) -> str:
    """Lines of the target's modules run so far in this process (shared modules accumulate)."""
    parts, hit, total = [], 0, 0
    for path in files:
        _, statements, _, missing, _ = COVERAGE.analysis2(path)
        covered = len(statements) - len(missing)
        hit, total = hit + covered, total + len(statements)
        parts.append(f"{Path(path).name} {covered}/{len(statements)}")
    return f"{100 * hit / max(1, total):.0f}% ({', '.join(parts)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=2.0, help="time per target")
    parser.add_argument("--target", action="append", choices=[t.name for t in TARGETS],
                        help="only these targets (repeatable; default: all)")
    args = parser.parse_args()
    chosen = [t for t in TARGETS if not args.target or t.name in args.target]
    print(f"# fuzz_long: {len(chosen)} targets x {args.minutes:g} min, python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cpus, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| target | executions | wall s | CPU s | line coverage | failures |")
    print("|---|---|---|---|---|---|")
    found = 0
    for target in chosen:
        result = run_target(target, args.minutes * 60)
        found += len(result["failures"])
        print(f"| {result['target']} | {result['executions']:,} | {result['wall_s']:.0f} | {result['cpu_s']:.0f} | "
              f"{result['coverage']} | {len(result['failures'])} |", flush=True)
        for failure in result["failures"]:
            print(f"  FAILURE in {target.name}: {failure}", flush=True)
    COVERAGE.stop()
    print(f"# {found} failure(s)")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
