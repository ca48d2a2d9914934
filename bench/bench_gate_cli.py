"""`hfvet gate --server URL` as a cold process, as a deploy script calls it, beside `python -c pass`.

A live `hfvet serve` (store prepared by vetting one fixture repo) answers; each run is a fresh
interpreter. Runs alternate (pass, gate, pass, gate, ...) so drift hits both alike.
Target (issue 10): median under 0.3 s.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import emit, machine_info, make_parser, median, table
from live_server import REPO, ROOT, prepared_server

TARGET = 0.3


def timed(command: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    return time.perf_counter() - started, proc.returncode, proc.stdout.strip()


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--runs", type=int, default=15, help="runs of each command (>= 10)")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args()
    with prepared_server() as live:
        env = {**os.environ, "HFVET_SERVER": live.url}
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            f"hfvet gate {REPO} --server URL": [sys.executable, "-m", "app", "gate", REPO],
            f"hfvet gate {REPO} --revision SHA --server URL": [sys.executable, "-m", "app", "gate", REPO,
                                                              "--revision", live.sha],
            f"hfvet gate {REPO} (local store, for comparison)": [sys.executable, "-m", "app", "gate", REPO],
        }
        envs = {name: env for name in commands}
        envs[f"hfvet gate {REPO} (local store, for comparison)"] = {**os.environ, **live.env, "HFVET_SERVER": ""}
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(max(args.runs, 10)):
            for name, command in commands.items():
                seconds, code, out = timed(command, envs[name])
                if code != 0 or (name != "python -c pass" and out != live.sha):
                    raise SystemExit(f"{name} failed: exit {code}, stdout {out!r}")
                times[name].append(seconds)
    base = median(times["python -c pass"]) or 0.0
    rows = [[name, f"{median(ts):.3f}", f"{min(ts):.3f}", f"{max(ts):.3f}", f"{(median(ts) or 0) - base:+.3f}",
             "yes" if (median(ts) or 0) < TARGET else "no"] for name, ts in times.items()]
    emit("\n".join([
        machine_info(["typer", "pydantic"]), "",
        table(["command (cold process)", "median s", "min s", "max s", "over `python -c pass`", "< 0.3 s"], rows),
        "", f"{max(args.runs, 10)} alternating runs each; every gate run printed the approved commit and exited 0.",
    ]), args.out)


if __name__ == "__main__":
    main()
