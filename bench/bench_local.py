"""Issue 13 benchmark: hfvet scan beside picklescan and modelscan on six generated local samples.

    python bench/bench_local.py [--reps 3] [--samples big-pickle,torch-zip,...] [--tools hfvet,picklescan,modelscan]
                                [--root $TMPDIR/hfvet-bench/local] [--hfvet-root CHECKOUT] [--timeout S] [--out FILE]

Samples (bench/local_samples.py, generated on first use, reused while their spec matches):
big-pickle (1.35M opcodes), torch-zip (45,000 members), joblib (numpy arrays), text-repo (2,000
files), safetensors (2 GB sparse), tiny-pickle. For each repetition, each sample, each tool runs
once as a fresh process of its real console script, tools alternating (the first one rotating
per repetition), so drift and cache warmth hit all alike.
Per run: wall time (perf_counter around the child), CPU seconds (user + sys of the child and
anything it waited for, from os.wait4) and peak RSS (ru_maxrss from the same call).
Tables give medians and the ratio to picklescan. A failed run is a result, not a crash.

Before/after: point `--hfvet-root` at a second checkout with its own venv (its
`.venv/bin/hfvet`, with PYTHONPATH set to that checkout); picklescan and modelscan always come
from this interpreter's environment, so they are the common yardstick of both runs.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchlib import TIMEOUT, emit, human_bytes, machine_info, make_parser, median, parse_json, ratio, table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # `bench.local_samples` and the `app` / `tests` packages it builds with

from bench.local_samples import Sample, by_name, footprint  # noqa: E402

DEFAULT_ROOT = Path(tempfile.gettempdir()) / "hfvet-bench" / "local"
TOOLS = ("hfvet", "picklescan", "modelscan")
BASELINE = "picklescan"


@dataclass(frozen=True)
class Tool:
    name: str
    prefix: list[str]  # the command before the target
    suffix: list[str]  # arguments after the target
    ok_codes: frozenset[int]  # exit codes that mean "scanned" (clean or not), not "failed"
    env: dict[str, str]
    marker: str  # on stdout only when the tool got as far as its report: exit 1 is also what a crash gives

    def command(self, target: Path) -> list[str]:
        return [*self.prefix, str(target), *self.suffix]


@dataclass
class Run:
    tool: str
    sample: str
    exit_code: int
    wall: float
    cpu: float  # user + sys seconds of the child
    max_rss_kb: int
    stdout: str
    stderr: str
    ok: bool


def hfvet_command(checkout: Path) -> list[str]:
    script = checkout / ".venv" / "bin" / "hfvet"
    return [str(script)] if script.exists() else [sys.executable, "-m", "app"]


def make_tools(names: Sequence[str], hfvet_root: Path) -> list[Tool]:
    bin_dir = Path(sys.executable).parent  # not resolved: the venv's bin, where the console scripts are
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    known = {
        "hfvet": Tool("hfvet", [*hfvet_command(hfvet_root), "scan"], ["--format", "json"],
                      frozenset({0, 1, 3}), {**base_env, "PYTHONPATH": str(hfvet_root)}, '"verdict"'),
        # picklescan exits 2 when it hit a scan error (it stops at a joblib array) after printing its summary
        "picklescan": Tool("picklescan", [str(bin_dir / "picklescan"), "-p"], [], frozenset({0, 1, 2}), base_env,
                           "SCAN SUMMARY"),
        # modelscan exits 3 when it found nothing it scans (safetensors, text): a result, not a failure
        "modelscan": Tool("modelscan", [str(bin_dir / "modelscan"), "-p"], ["-r", "json"],
                          frozenset({0, 1, 3}), base_env, '"summary"'),
    }
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown tools {unknown}; choose from {list(known)}")
    return [known[n] for n in names]


def run_child(command: list[str], env: dict[str, str], cwd: Path,
              timeout: float = TIMEOUT) -> tuple[int, float, float, int, str, str]:
    """Run one process; (exit code, wall s, cpu s, peak RSS KB, stdout, stderr) from os.wait4."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        try:
            proc = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=cwd)
        except OSError as exc:
            return -1, 0.0, 0.0, 0, "", f"{type(exc).__name__}: {exc}"
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait again
        out.seek(0)
        err.seek(0)
        return (proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss,
                out.read(), err.read())


def measure(tool: Tool, sample: Sample, target: Path, cwd: Path, timeout: float) -> Run:
    code, wall, cpu, rss, out, err = run_child(tool.command(target), tool.env, cwd, timeout)
    return Run(tool.name, sample.name, code, wall, cpu, rss, out, err, code in tool.ok_codes and tool.marker in out)


def outcome(run: Run) -> str:
    """What the tool said, short: verdict and findings for hfvet, files scanned for the peers."""
    if run.exit_code == -signal.SIGKILL:
        return f"KILLED after {run.wall:.0f} s (--timeout)"
    if not run.ok:
        return f"FAILED (exit {run.exit_code})"
    return f"{_said(run)} (exit {run.exit_code})"


def _said(run: Run) -> str:
    if run.tool == "hfvet":
        report = parse_json(run.stdout) or {}
        scanned = sum(1 for f in report.get("files", []) if f.get("scanned"))
        return f"{report.get('verdict')}, {len(report.get('findings', []))} findings, {scanned} files scanned"
    if run.tool == "picklescan":
        found = re.search(r"Scanned files: (\d+)", run.stdout)
        infected = re.search(r"Infected files: (\d+)", run.stdout)
        errors = ", scan error" if run.exit_code == 2 else ""
        return f"{infected.group(1) if infected else '?'} infected, {found.group(1) if found else '?'} scanned{errors}"
    found = re.search(r'"total_scanned":\s*(\d+)', run.stdout)
    issues = re.search(r'"total_issues":\s*(\d+)', run.stdout)
    return f"{issues.group(1) if issues else '?'} issues, {found.group(1) if found else '?'} scanned"


def fmt(value: float | None, spec: str = ".2f") -> str:
    return "n/a" if value is None else format(value, spec)


def sample_rows(sample: str, runs: list[Run], tools: Sequence[str]) -> list[list[str]]:
    def good(tool: str) -> list[Run]:
        return [r for r in runs if r.tool == tool and r.ok]

    base = good(BASELINE)
    base_wall, base_cpu = median([r.wall for r in base]), median([r.cpu for r in base])
    rows = []
    for tool in tools:
        mine, ok = [r for r in runs if r.tool == tool], good(tool)
        wall, cpu = median([r.wall for r in ok]), median([r.cpu for r in ok])
        rss = median([r.max_rss_kb for r in ok])
        rows.append([
            sample, tool, "; ".join(sorted({outcome(r) for r in mine})), f"{len(ok)}/{len(mine)}",
            fmt(wall), ", ".join(f"{r.wall:.2f}" for r in mine), fmt(cpu),
            human_bytes(rss * 1024 if rss is not None else None),
            ratio(wall, base_wall) if base else "n/a", ratio(cpu, base_cpu) if base else "n/a",
        ])
    return rows


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"


def render(samples: list[Sample], root: Path, tool_names: Sequence[str], hfvet_root: Path, reps: int,
           runs: list[Run], load_before: str) -> str:
    headers = ["sample", "tool", "result", "ok runs", "median wall (s)", "runs (s)", "median CPU (s)",
               "median peak RSS", f"wall vs {BASELINE}", f"CPU vs {BASELINE}"]
    rows = [row for s in samples for row in sample_rows(s.name, [r for r in runs if r.sample == s.name],
                                                         tool_names)]
    described = []
    for s in samples:
        files, size = footprint(s.target(root))
        described.append(f"  - `{s.name}`: {s.description}; {files:,} file(s), {human_bytes(size)} apparent")
    failures = [f"- {r.sample} / {r.tool} failed (exit {r.exit_code}): {r.stderr.strip()[-400:]!r}"
                for r in runs if not r.ok]
    return "\n".join([
        machine_info(["hfvet", "picklescan", "modelscan"]),
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average (1, 5, 15 min)"
        f" before {load_before}, after {load_average()}",
        f"- hfvet: `{' '.join(Path(p).name for p in hfvet_command(hfvet_root))} scan PATH --format json`"
        f" from checkout `{hfvet_root.name}`; peers: `picklescan -p PATH`, `modelscan -p PATH -r json`",
        f"- repetitions: {reps}, tools alternating per sample (first one rotating), each run a fresh"
        " process; medians over successful runs; CPU = user + sys of the child (os.wait4), peak RSS = its ru_maxrss",
        "- samples (generated by bench/local_samples.py, big tensor data sparse):",
        *described,
        "",
        table(headers, rows),
        "",
        *(failures or ["All runs succeeded."]),
    ])


def main() -> int:
    parser = make_parser(__doc__)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--samples", help="comma-separated subset of the samples (default: all)")
    parser.add_argument("--tools", default=",".join(TOOLS), help="comma-separated subset of hfvet,picklescan,modelscan")
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="where the samples are generated")
    parser.add_argument("--hfvet-root", type=Path, default=ROOT, help="the checkout whose hfvet runs")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds before a run is killed")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    samples = by_name(args.samples.split(",") if args.samples else None)
    tools = make_tools(args.tools.split(","), args.hfvet_root.resolve())
    targets = {s.name: s.ensure(args.root) for s in samples}
    load_before = load_average()
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as cwd:  # no tool finds a settings file or leaves output in the repo
        for rep in range(1, args.reps + 1):
            order = tools[rep % len(tools):] + tools[: rep % len(tools)]  # who goes first rotates
            for sample in samples:
                for tool in order:
                    run = measure(tool, sample, targets[sample.name], Path(cwd), args.timeout)
                    runs.append(run)
                    print(f"rep {rep}/{args.reps} {sample.name} {tool.name}: exit {run.exit_code},"
                          f" {run.wall:.2f}s wall, {run.cpu:.2f}s CPU, {run.max_rss_kb / 1024:.0f} MB",
                          file=sys.stderr)
    emit(render(samples, args.root, [t.name for t in tools], args.hfvet_root.resolve(), args.reps, runs,
                load_before), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
