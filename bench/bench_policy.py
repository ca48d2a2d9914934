"""Issue 13 item 4: the cost of a policy decision, alone and inside `hfvet scan`.

    python bench/bench_policy.py [--reps 5] [--budget 3] [--src TREE] [--out FILE]

1. Decision time: `evaluate(policy, facts)` for a generated report of 100 files and 100 findings
   (a realistic mix: pickles, archives, binaries, configs; dangerous, unknown and info findings),
   under the shipped `default` and `strict` policies, for a third-party and a vendor-official repo.
   The policy is loaded once (as a server or a scan does); each decision is timed alone, as many as
   fit in `--budget` seconds (at least 3), and the medians of wall and CPU time are reported: for
   `evaluate` on validated facts (a re-decision, as the gate makes), and for the pipeline's `decide`
   hook, which first builds those facts from the scan's findings and file reports.
2. `hfvet scan DIR --policy default` vs `--policy interim` (the severity-only verdict: no policy
   engine at all) on a 109-file sample directory (the app/examples repos plus tests/corpus cases),
   as cold processes, alternating, `--reps` times: median wall time and CPU seconds of the child.

`--src TREE` measures another source tree (e.g. `git archive <commit> | tar -x -C TREE`) for a
before/after comparison; its `app` is imported and run instead of this checkout's.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from benchlib import emit, machine_info, make_parser, table  # noqa: E402

SAMPLE_FILES = 109
REPORT_FILES = REPORT_FINDINGS = 100

# (rule, severity, format of the file it is about): a mix as the scanners report them.
FINDING_MIX = [
    ("pickle-unknown-global", "medium", "pytorch-zip"), ("pickle-dangerous-global", "critical", "pickle"),
    ("executable-binary", "high", "elf"), ("remote-code", "medium", "text"), ("auto-map", "medium", "json"),
    ("forked-code", "high", "text"), ("yara:suspicious-string", "low", "text"), ("note", "info", "safetensors"),
    ("malformed-archive", "medium", "zip"), ("limit-exceeded", "high", "pickle"),
    ("unknown-code-install", "high", "text"), ("pickle-dynamic-call", "high", "pickle"),
]
FORMATS = ["safetensors", "pytorch-zip", "pickle", "zip", "elf", "text", "json", "gguf", "numpy", "tar"]


def report_facts(repo: str) -> dict[str, Any]:
    """A 100-file, 100-finding report as `facts_from_report_dict` reads it."""
    files = [{"path": f"dir{i % 7}/file{i}.{FORMATS[i % len(FORMATS)]}", "size": 1000 + i,
              "format": FORMATS[i % len(FORMATS)], "scanned": i % 37 != 5} for i in range(REPORT_FILES)]
    findings = []
    for i in range(REPORT_FINDINGS):
        rule, severity, fmt = FINDING_MIX[i % len(FINDING_MIX)]
        path = next((f["path"] for f in files[i % REPORT_FILES:] if f["format"] == fmt), files[i]["path"])
        source = "github.com/example/fork" if rule == "forked-code" else None
        findings.append({"path": path, "rule": rule, "severity": severity, "scanner": "bench",
                         "message": f"{rule} #{i}", "source": source})
    return {"repo": repo, "revision": "0" * 40, "files": files, "findings": findings}


def pipeline_inputs(report: dict[str, Any]) -> tuple[Any, list[Any], list[Any]]:
    """The same report as the pipeline hands it to its `decide` hook."""
    from app.core.findings import Finding, Severity
    from app.core.manifest import Manifest, ManifestFile, RepoIdentity
    from app.core.report import FileReport

    files = [FileReport(f["path"], f["size"], None, None, f["format"], f["scanned"]) for f in report["files"]]
    manifest = Manifest(RepoIdentity(report["repo"], report["revision"]),
                        tuple(ManifestFile(f.path, f.size, format=f.format) for f in files))
    findings = [Finding(f["path"], f["scanner"], f["rule"], Severity(f["severity"]), f["message"], source=f["source"])
                for f in report["findings"]]
    return manifest, findings, files


def timed_calls(call: Callable[[], str], budget: float) -> tuple[str, list[float], list[float]]:
    """At least 3 calls, then more until `budget` seconds have passed (at most 2,000)."""
    walls, cpus, verdict = [], [], ""
    started = time.perf_counter()
    while len(walls) < 3 or (time.perf_counter() - started < budget and len(walls) < 2000):
        wall, cpu = time.perf_counter(), time.process_time()
        verdict = call()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return verdict, walls, cpus


def time_decisions(budget: float) -> list[list[str]]:
    from app.core.policy import evaluate, facts_from_report_dict, load_policy, make_decide

    rows = []
    for name in ("default", "strict"):
        policy = load_policy(Path("policies") / f"{name}.yaml")
        decide = make_decide(policy)
        for repo in ("canada-quant/Model-FP8", "nvidia/Model-FP8"):
            report = report_facts(repo)
            facts, inputs = facts_from_report_dict(report), pipeline_inputs(report)
            calls = {"evaluate(policy, facts)": lambda: evaluate(policy, facts).verdict.value,  # noqa: B023
                     "pipeline hook (facts + evaluate)": lambda: decide(*inputs).verdict.value}  # noqa: B023
            for what, call in calls.items():
                verdict, walls, cpus = timed_calls(call, budget / 2)
                rows.append([name, repo, what, verdict, str(len(walls)), f"{statistics.median(walls) * 1e3:,.2f}",
                             f"{statistics.median(cpus) * 1e3:,.2f}", f"{min(walls) * 1e3:,.2f}"])
    return rows


def write_sample_dir(root: Path) -> int:
    """The example repos, then corpus cases in registry order, up to SAMPLE_FILES files."""
    from app.examples.catalog import build_examples
    from tests.corpus.registry import all_cases

    build_examples(root / "examples", hub_meta=False)
    count = sum(1 for p in root.rglob("*") if p.is_file())
    for case in all_cases():
        files = case.files()
        if count + len(files) <= SAMPLE_FILES:
            case.write(root / "corpus" / case.family / case.name)
            count += len(files)
    return count


def timed_scan(directory: Path, policy: str, env: dict[str, str]) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "app", "scan", str(directory), "--policy", policy,
                           "--format", "json", "--no-store"], capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        verdict = json.loads(proc.stdout)["verdict"]
    except (ValueError, KeyError) as exc:
        problem = f"scan --policy {policy} gave no report (exit {proc.returncode}): {proc.stderr[-400:]}"
        raise SystemExit(problem) from exc
    return wall, cpu, verdict


def time_scans(reps: int, env: dict[str, str]) -> tuple[list[list[str]], str]:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "samples"
        count = write_sample_dir(directory)
        runs: dict[str, list[tuple[float, float, str]]] = {"interim": [], "default": []}
        for _ in range(reps):
            for policy in runs:
                runs[policy].append(timed_scan(directory, policy, env))
    medians = {p: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs)) for p, rs in runs.items()}
    rows = [[f"`hfvet scan DIR --policy {p}`", "/".join(sorted({r[2] for r in rs})), f"{medians[p][0]:.2f}",
             f"{medians[p][1]:.2f}", f"{medians[p][0] / medians['interim'][0]:.2f}x",
             f"{medians[p][1] / medians['interim'][1]:.2f}x"] for p, rs in runs.items()]
    return rows, f"{count} files, {reps} alternating runs each"


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--reps", type=int, default=5, help="scan runs per policy (at least 3)")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds of decisions per row (at least 3 each)")
    parser.add_argument("--src", type=Path, default=HERE.parent, help="source tree to measure (default: this one)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    src = args.src.resolve()
    os.chdir(src)
    sys.path.insert(0, str(src))
    env = {**os.environ, "PYTHONPATH": str(src)}
    decisions = time_decisions(args.budget)
    scans, scan_note = time_scans(max(3, args.reps), env)
    emit("\n".join([
        machine_info(["cel-python", "pydantic"]), "",
        f"Decision for a generated report of {REPORT_FILES} files and {REPORT_FINDINGS} findings (policy loaded once):",
        "", table(["policy", "repo", "timed", "verdict", "decisions", "median wall ms", "median CPU ms",
                   "min wall ms"], decisions),
        "", f"Scans of the sample directory ({scan_note}; CPU = the child's user+system seconds):", "",
        table(["command", "verdict", "median wall s", "median CPU s", "wall vs interim", "CPU vs interim"], scans),
    ]), args.out)


if __name__ == "__main__":
    main()
