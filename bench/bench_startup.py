"""Start-up time of light `hfvet` commands as cold processes, beside `python -c pass` and `picklescan --help`.

Every run is a fresh interpreter; runs alternate (pass, help, scan, ..., pass, help, ...) so drift on
this shared machine hits all commands alike. CPU seconds (user + system of the child, from wait4)
are printed beside wall time: they hold steadier than wall time when other jobs compete for the cores.
Bytecode caches are written (PYTHONDONTWRITEBYTECODE is dropped, one warm-up round) as for any install.
`gate --server URL` asks a live `hfvet serve` (store prepared by vetting one fixture repo).
`scan --policy interim` is the same scan without the policy engine (the severity-only verdict): the
difference is what loading the policy costs. The user cache (compiled YARA rules, CEL parse trees) is
a private directory filled by the warm-up round, as on any machine after its first scan; the
`(empty caches)` row gives each run a new empty one: a first start, which also builds celpy's parser.
Targets (issue 13 item 5): `--help` and `gate --server URL` < 0.3 s, `scan tiny.pkl` < 0.4 s (medians).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import emit, machine_info, make_parser, median, table
from live_server import REPO, ROOT, prepared_server

TARGETS = {"hfvet --help": 0.3, "hfvet gate REPO --server URL": 0.3, "hfvet scan tiny.pkl": 0.4}
OK_CODES = {0, 3}  # scan of the tiny pickle answers REVIEW (exit 3): third-party by default


def timed(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, exit code) of one cold process."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


@dataclass
class Measured:
    command: list[str]
    env: dict[str, str]
    cwd: Path
    target: float | None = None
    empty_caches: Path | None = None  # each run gets a new empty XDG_CACHE_HOME under this directory
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)


def hfvet_commands(tiny: Path) -> dict[str, list[str]]:
    hfvet = [sys.executable, "-m", "app"]
    return {
        "hfvet --help": [*hfvet, "--help"],
        "hfvet gate REPO --server URL": [*hfvet, "gate", REPO],
        "hfvet scan tiny.pkl": [*hfvet, "scan", str(tiny)],
        "hfvet scan tiny.pkl --policy interim": [*hfvet, "scan", str(tiny), "--policy", "interim"],
        "hfvet policy check": [*hfvet, "policy", "check"],
        "hfvet hub serve --help": [*hfvet, "hub", "serve", "--help"],
    }


def plan(tiny: Path, checkouts: dict[str, Path], env: dict[str, str], scratch: Path) -> dict[str, Measured]:
    """Every command to time: the references, then each hfvet command per checkout (label: path)."""
    measured = {
        "python -c pass": Measured([sys.executable, "-c", "pass"], env, ROOT),
        "picklescan --help": Measured([str(Path(sys.executable).with_name("picklescan")), "--help"], env, ROOT),
    }
    for name, command in hfvet_commands(tiny).items():
        for label, checkout in checkouts.items():
            row = f"{name} ({label})" if len(checkouts) > 1 else name
            measured[row] = Measured(command, {**env, "PYTHONPATH": str(checkout)}, checkout, TARGETS.get(name))
    scan = hfvet_commands(tiny)["hfvet scan tiny.pkl"]
    for label, checkout in checkouts.items():
        row = "hfvet scan tiny.pkl (empty caches" + (f", {label})" if len(checkouts) > 1 else ")")
        measured[row] = Measured(scan, {**env, "PYTHONPATH": str(checkout)}, checkout, empty_caches=scratch)
    return measured


def run_env(m: Measured) -> dict[str, str]:
    if m.empty_caches is None:
        return m.env
    return {**m.env, "XDG_CACHE_HOME": tempfile.mkdtemp(dir=m.empty_caches, prefix="cache-")}


def run_all(measured: dict[str, Measured], runs: int) -> None:
    """One warm-up round (writes bytecode caches, as any installed copy has them), then ``runs`` rounds."""
    for round_no in range(runs + 1):
        for name, m in measured.items():
            wall, cpu, code = timed(m.command, run_env(m), m.cwd)
            if code not in OK_CODES:
                raise SystemExit(f"{name} failed: exit {code}")
            if round_no:
                m.walls.append(wall)
                m.cpus.append(cpu)


def rows(measured: dict[str, Measured]) -> list[list[str]]:
    base = median(measured["python -c pass"].walls) or 0.0
    out = []
    for name, m in measured.items():
        wall = median(m.walls) or 0.0
        met = "" if m.target is None else ("yes" if wall < m.target else "no") + f" (< {m.target} s)"
        out.append([name, f"{wall:.3f}", f"{median(m.cpus) or 0:.3f}", f"{min(m.walls):.3f}", f"{max(m.walls):.3f}",
                    f"{wall - base:+.3f}", met])
    return out


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--runs", type=int, default=10, help="runs of each command (>= 10)")
    parser.add_argument("--baseline", type=Path,
                        help="another hfvet checkout (e.g. `git worktree add` of the commit before): its commands "
                        "run alternating with this checkout's, rows labelled before/after")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args()
    runs = max(args.runs, 10)
    checkouts = {"before": args.baseline, "after": ROOT} if args.baseline else {"this checkout": ROOT}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="hfvet-startup-") as tmp, prepared_server() as live:
        tiny = Path(tmp) / "tiny.pkl"
        tiny.write_bytes(pickle.dumps({"weights": [1, 2, 3]}))  # plain data: nothing to execute
        env |= {"HFVET_SERVER": live.url, "HFVET_DATABASE_URL": live.env["HFVET_DATABASE_URL"],
                "XDG_CACHE_HOME": str(Path(tmp) / "cache")}
        (Path(tmp) / "empty").mkdir()
        measured = plan(tiny, checkouts, env, Path(tmp) / "empty")
        run_all(measured, runs)
    emit("\n".join([
        machine_info(["typer", "rich", "pydantic"]), "",
        table(["command (cold process)", "median wall s", "median CPU s", "min s", "max s",
               "over `python -c pass`", "target met"], rows(measured)),
        "", f"{runs} alternating runs of each after one warm-up round; every run exited 0 (scan: 3, REVIEW).",
        f"Load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} (2 cores).",
    ]), args.out)


if __name__ == "__main__":
    main()
