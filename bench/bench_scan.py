"""Issue 2 benchmark: `hfvet scan` vs picklescan vs modelscan on a multi-GB pickle repo.

    python bench/bench_scan.py [--dir $TMPDIR/hfvet-bench/pickle-repo] [--reps 3] [--out FILE]
                               [generator options of gen_pickle_repo.py]

Generates the repo if absent (sparse files, see gen_pickle_repo.py), then runs each tool R
times, interleaved, each in a fresh process under measure_io.py: wall time is end to end
(interpreter start included); bytes read are /proc/self/io `rchar` counted from just after the
tool's import to its exit (sparse holes count, memory-mapped reads would not). For hfvet the
self-reported `stats.bytes_read` from its JSON is shown too. A tool that fails is reported with
its exit code; the benchmark itself does not fail.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchlib import (
    Run,
    emit,
    human_bytes,
    machine_info,
    make_parser,
    median,
    parse_json,
    ratio,
    run_measured,
    table,
)
from gen_pickle_repo import add_spec_args, spec_from

from app.examples.minimum import minimum_report
from app.examples.synthetic_pickle import PickleRepoSpec, ensure_pickle_repo

DEFAULT_DIR = Path(tempfile.gettempdir()) / "hfvet-bench" / "pickle-repo"


@dataclass(frozen=True)
class Tool:
    name: str
    args: list[str]
    ok_codes: set[int]  # exit codes that mean "scanned" (clean or not), not "failed"


def tools(repo: Path) -> list[Tool]:
    return [
        Tool("hfvet", ["scan", str(repo), "--format", "json"], {0, 1, 3}),
        Tool("picklescan", ["-p", str(repo)], {0, 1}),
        Tool("modelscan", ["-p", str(repo), "-r", "json"], {0, 1}),
    ]


def outcome(run: Run) -> str:
    if run.tool == "hfvet":
        report = parse_json(run.stdout)
        if report:
            run.extra["bytes_read"] = report.get("stats", {}).get("bytes_read")
            return f"{report.get('verdict')} ({len(report.get('findings', []))} findings)"
    if not run.ok:
        return f"FAILED (exit {run.exit_code})"
    return "clean" if run.exit_code == 0 else "issues reported"


def summarize(runs: dict[str, list[Run]]) -> list[list[str]]:
    base = runs.get("hfvet", [])
    base_wall = median([r.wall_seconds for r in base if r.ok])
    base_bytes = median([r.rchar for r in base if r.ok])
    rows = []
    for name, tool_runs in runs.items():
        good = [r for r in tool_runs if r.ok]
        wall = median([r.wall_seconds for r in good])
        rchar = median([r.rchar for r in good])
        reported = median([r.extra.get("bytes_read") for r in good])
        results = sorted({outcome(r) for r in tool_runs})
        rows.append([
            name, "; ".join(results), f"{len(good)}/{len(tool_runs)}",
            f"{wall:.2f}" if wall is not None else "n/a",
            ", ".join(f"{r.wall_seconds:.2f}" for r in tool_runs),
            human_bytes(rchar), human_bytes(reported) if name == "hfvet" else "-",
            ratio(wall, base_wall), ratio(rchar, base_bytes),
        ])
    return rows


def main() -> int:
    parser = make_parser(__doc__)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", type=Path)
    add_spec_args(parser, PickleRepoSpec())
    args = parser.parse_args()

    ensure_pickle_repo(args.dir, spec_from(args))
    minimum = minimum_report(args.dir.name, args.dir)
    runs: dict[str, list[Run]] = {t.name: [] for t in tools(args.dir)}
    for rep in range(args.reps):
        for tool in tools(args.dir):
            run = run_measured(tool.name, tool.args, ok_codes=tool.ok_codes)
            outcome(run)
            runs[tool.name].append(run)
            print(f"rep {rep + 1}/{args.reps} {tool.name}: exit {run.exit_code}, {run.wall_seconds:.2f}s, "
                  f"rchar {human_bytes(run.rchar)}", file=sys.stderr)
    emit(render(args, minimum, runs), args.out)
    return 0


def render(args: argparse.Namespace, minimum: dict[str, Any], runs: dict[str, list[Run]]) -> str:
    headers = ["tool", "result", "ok runs", "median wall (s)", "runs (s)", "bytes read (rchar, median)",
               "hfvet stats.bytes_read", "time vs hfvet", "bytes vs hfvet"]
    failures = [f"- {r.tool} run failed (exit {r.exit_code}): {r.stderr.strip()[-400:]!r}"
                for rs in runs.values() for r in rs if not r.ok]
    return "\n".join([
        "## Local scan benchmark: hfvet scan vs picklescan vs modelscan",
        "",
        machine_info(["hfvet", "picklescan", "modelscan"]),
        f"- repo: `{args.dir}` ({len(minimum['files'])} files, {human_bytes(minimum['repo_bytes'])}"
        f" apparent size, sparse), minimum bytes a vet needs: {human_bytes(minimum['minimum_bytes'])}",
        f"- repetitions: {args.reps}, interleaved; medians over successful runs",
        "- bytes read: /proc/self/io rchar from after the tool's import to its exit (measure_io.py)",
        "",
        table(headers, summarize(runs)),
        "",
        *(failures or ["All runs succeeded."]),
    ])


if __name__ == "__main__":
    sys.exit(main())
