"""GET /gate for an approved exact sha vs GET /healthz, from one uvicorn worker (`hfvet serve`).

The load comes from a second process: wrk (`apt-get install wrk`), a fixed number of connections
for a fixed time per round; rounds alternate gate, healthz, gate, ... so drift hits both alike.
Targets (issue 10): gate >= 2,000 req/s, p99 < 20 ms, and >= 60% of /healthz's rate.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import emit, machine_info, make_parser, median, table
from live_server import REPO, prepared_server

_RATE = re.compile(r"Requests/sec:\s+([\d.]+)")
_P99 = re.compile(r"^\s*99%\s+([\d.]+)(us|ms|s)\s*$", re.M)
_ERRORS = re.compile(r"Non-2xx or 3xx responses: (\d+)|Socket errors: .*")
_UNIT = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def wrk(url: str, seconds: int, connections: int) -> tuple[float, float, str]:
    """(requests/s, p99 ms, problems) of one wrk round."""
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", url],
                         capture_output=True, text=True, timeout=seconds + 60, check=True).stdout
    rate, p99 = _RATE.search(out), _P99.search(out)
    if rate is None or p99 is None:
        raise SystemExit(f"cannot read wrk's output:\n{out}")
    problems = "; ".join(m.group(0) for m in _ERRORS.finditer(out))
    return float(rate.group(1)), float(p99.group(1)) * _UNIT[p99.group(2)], problems


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=3, help="rounds per endpoint (alternating)")
    parser.add_argument("--seconds", type=int, default=10, help="seconds per round")
    parser.add_argument("--connections", type=int, default=16, help="concurrent keep-alive connections")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    parser.add_argument("--no-access-log", action="store_true", help="serve with --no-access-log")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    with prepared_server(serve_args=("--no-access-log",) if args.no_access_log else ()) as live:
        gate_url = f"{live.url}/gate?repo={REPO}&revision={live.sha}"
        with urllib.request.urlopen(gate_url, timeout=10) as response:  # noqa: S310 (loopback)
            assert response.status == 200, "the prepared revision must be approved"
        urls = {"GET /gate (approved sha)": gate_url, "GET /healthz": f"{live.url}/healthz"}
        for url in urls.values():
            wrk(url, 2, args.connections)  # warm-up: imports, caches, connection pool
        results: dict[str, list[tuple[float, float, str]]] = {name: [] for name in urls}
        for _ in range(args.rounds):
            for name, url in urls.items():
                results[name].append(wrk(url, args.seconds, args.connections))
    emit(_report(results, args), args.out)


def _report(results: dict[str, list[tuple[float, float, str]]], args: argparse.Namespace) -> str:
    rates = {name: median([r for r, _, _ in runs]) or 0.0 for name, runs in results.items()}
    healthz = rates["GET /healthz"]
    rows = []
    for name, runs in results.items():
        p99 = median([p for _, p, _ in runs]) or 0.0
        problems = "; ".join(sorted({p for _, _, p in runs if p})) or "none"
        rows.append([name, f"{rates[name]:,.0f}", f"{p99:.1f}", f"{rates[name] / healthz:.0%}",
                     ", ".join(f"{r:,.0f}" for r, _, _ in runs), problems])
    return "\n".join([
        machine_info(["fastapi", "uvicorn", "sqlalchemy"]), "",
        table(["endpoint", "median req/s", "median p99 ms", "of /healthz", "rounds req/s", "errors"], rows),
        "", f"wrk -t1 -c{args.connections} -d{args.seconds}s, "
        f"{args.rounds} alternating rounds per endpoint, one `hfvet serve` (one uvicorn worker).",
    ])


if __name__ == "__main__":
    main()
