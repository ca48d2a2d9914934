"""Start-up time of light `hfvet` commands as cold processes, beside `python -c pass` and `picklescan --help`.

Every run is a fresh interpreter; runs alternate (pass, help, scan, ..., pass, help, ...) so drift on
this shared machine hits all commands alike. CPU seconds (user + system of the child, from wait4)
are printed beside wall time: they hold steadier than wall time when other jobs compete for the cores.
`gate --server URL` asks a live `hfvet serve` (store prepared by vetting one fixture repo).
Targets (issue 13 item 5): `--help` and `gate --server URL` < 0.3 s, `scan tiny.pkl` < 0.4 s (medians).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
import time
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


def commands(tiny: Path) -> dict[str, list[str]]:
    hfvet = [sys.executable, "-m", "app"]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "picklescan --help": [str(Path(sys.executable).with_name("picklescan")), "--help"],
        "hfvet --help": [*hfvet, "--help"],
        "hfvet gate REPO --server URL": [*hfvet, "gate", REPO],
        "hfvet scan tiny.pkl": [*hfvet, "scan", str(tiny)],
        "hfvet policy check": [*hfvet, "policy", "check"],
        "hfvet hub serve --help": [*hfvet, "hub", "serve", "--help"],
    }


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--runs", type=int, default=10, help="runs of each command (>= 10)")
    parser.add_argument("--checkout", type=Path, default=ROOT,
                        help="the hfvet checkout whose code the measured commands run (default: this one)")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args()
    runs = max(args.runs, 10)
    with tempfile.TemporaryDirectory(prefix="hfvet-startup-") as tmp, prepared_server() as live:
        tiny = Path(tmp) / "tiny.pkl"
        tiny.write_bytes(pickle.dumps({"weights": [1, 2, 3]}))  # plain data: nothing to execute
        env = {**os.environ, "HFVET_SERVER": live.url, "PYTHONPATH": str(args.checkout),
               "HFVET_DATABASE_URL": live.env["HFVET_DATABASE_URL"]}
        measured = commands(tiny)
        walls: dict[str, list[float]] = {name: [] for name in measured}
        cpus: dict[str, list[float]] = {name: [] for name in measured}
        for _ in range(runs):
            for name, command in measured.items():
                wall, cpu, code = timed(command, env, args.checkout)
                if code not in OK_CODES:
                    raise SystemExit(f"{name} failed: exit {code}")
                walls[name].append(wall)
                cpus[name].append(cpu)
    base = median(walls["python -c pass"]) or 0.0
    rows = []
    for name in measured:
        wall, target = median(walls[name]) or 0.0, TARGETS.get(name)
        met = "" if target is None else ("yes" if wall < target else "no") + f" (< {target} s)"
        rows.append([name, f"{wall:.3f}", f"{median(cpus[name]) or 0:.3f}", f"{min(walls[name]):.3f}",
                     f"{max(walls[name]):.3f}", f"{wall - base:+.3f}", met])
    emit("\n".join([
        machine_info(["typer", "rich", "pydantic"]), "",
        table(["command (cold process)", "median wall s", "median CPU s", "min s", "max s",
               "over `python -c pass`", "target met"], rows),
        "", f"{runs} alternating runs of each; every run exited 0 (scan: 3, REVIEW, as expected).",
    ]), args.out)


if __name__ == "__main__":
    main()
