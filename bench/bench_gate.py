"""GET /gate for an approved exact sha vs GET /healthz, from one uvicorn worker (`hfvet serve`).

The load comes from a second process: wrk (`apt-get install wrk`), a fixed number of connections
for a fixed time per round; rounds alternate gate, healthz, hello, raw, gate, ... so drift hits all
alike. `hello` and `raw` (bench/hello_app.py) are a bare FastAPI app and a bare ASGI callable under
the same uvicorn: references for what this HTTP stack does on this machine at the moment.
Targets (issue 10): gate >= 2,000 req/s, p99 < 20 ms, and >= 60% of /healthz's rate; the last line
printed says which were met.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import emit, machine_info, make_parser, median, table
from live_server import REPO, prepared_server

from app.cli.child_server import free_port

HERE = Path(__file__).resolve().parent
_RATE = re.compile(r"Requests/sec:\s+([\d.]+)")
_P99 = re.compile(r"^\s*99%\s+([\d.]+)(us|ms|s)\s*$", re.M)
_ERRORS = re.compile(r"Non-2xx or 3xx responses: (\d+)|Socket errors: .*")
_UNIT = {"us": 0.001, "ms": 1.0, "s": 1000.0}
GATE, HEALTHZ = "GET /gate (approved sha)", "GET /healthz"
HELLO, RAW = "bare FastAPI hello (reference)", "bare ASGI hello (ceiling)"
TARGET_RATE, TARGET_P99_MS, TARGET_OF_HEALTHZ = 2000.0, 20.0, 0.6


def wrk(url: str, seconds: int, connections: int) -> tuple[float, float, str]:
    """(requests/s, p99 ms, problems) of one wrk round."""
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", url],
                         capture_output=True, text=True, timeout=seconds + 60, check=True).stdout
    rate, p99 = _RATE.search(out), _P99.search(out)
    if rate is None or p99 is None:
        raise SystemExit(f"cannot read wrk's output:\n{out}")
    problems = "; ".join(m.group(0) for m in _ERRORS.finditer(out))
    return float(rate.group(1)), float(p99.group(1)) * _UNIT[p99.group(2)], problems


_HEY_RATE = re.compile(r"Requests/sec:\s+([\d.]+)")
_HEY_P99 = re.compile(r"^\s*99% in ([\d.]+) secs", re.M)
_HEY_STATUS = re.compile(r"^\s*\[(\d{3})\]\s+(\d+) responses", re.M)
_HEY_ERRORS = re.compile(r"Error distribution:\n((?:\s+\[\d+\].*\n?)+)")


def hey(url: str, seconds: int, connections: int, rate: float) -> tuple[float, float, str]:
    """(requests/s, p99 ms, problems) of one round at a fixed offered rate: hey (`apt-get install hey`),
    ``connections`` keep-alive workers each paced to rate/connections requests per second.

    Unlike wrk's saturating rounds, this is the latency a steady load of ``rate`` sees. hey paces each
    worker with a ticker that skips missed ticks, so a stall delays the requests behind it unseen
    (coordinated omission): the p99 is a lower bound during stalls, and the achieved rate shows them.
    """
    per_worker = max(1.0, rate / connections)
    out = subprocess.run(["hey", "-z", f"{seconds}s", "-c", str(connections), "-q", f"{per_worker:g}", url],
                         capture_output=True, text=True, timeout=seconds + 60, check=True).stdout
    achieved, p99 = _HEY_RATE.search(out), _HEY_P99.search(out)
    if achieved is None or p99 is None:
        raise SystemExit(f"cannot read hey's output:\n{out}")
    problems = [f"{n} x {code}" for code, n in _HEY_STATUS.findall(out) if not code.startswith("2")]
    errors = _HEY_ERRORS.search(out)
    if errors:
        problems.append(" ".join(errors.group(1).split()))
    return float(achieved.group(1)), float(p99.group(1)) * 1000.0, "; ".join(problems)


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=3, help="rounds per endpoint (alternating)")
    parser.add_argument("--seconds", type=int, default=10, help="seconds per round")
    parser.add_argument("--connections", type=int, default=16, help="concurrent keep-alive connections")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    parser.add_argument("--no-access-log", action="store_true", help="serve with --no-access-log")
    args = parser.parse_args()
    args.load_before = _load()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    serve_args = ("--no-access-log",) if args.no_access_log else ()
    with prepared_server(serve_args=serve_args) as live, hello_server(serve_args) as hello:
        gate_url = f"{live.url}/gate?repo={REPO}&revision={live.sha}"
        with urllib.request.urlopen(gate_url, timeout=10) as response:  # noqa: S310 (loopback)
            assert response.status == 200, "the prepared revision must be approved"
        urls = {GATE: gate_url, HEALTHZ: f"{live.url}/healthz", HELLO: f"{hello}/hello", RAW: f"{hello}/raw"}
        for url in urls.values():
            wrk(url, 2, args.connections)  # warm-up: imports, caches, connection pool
        results: dict[str, list[tuple[float, float, str]]] = {name: [] for name in urls}
        for _ in range(args.rounds):
            for name, url in urls.items():
                results[name].append(wrk(url, args.seconds, args.connections))
    emit(_report(results, args), args.out)


@contextmanager
def hello_server(serve_args: Sequence[str]) -> Iterator[str]:
    """bench/hello_app.py under uvicorn as `hfvet serve` runs it (log level info, access log as asked)."""
    port = free_port()
    access = ["--no-access-log"] if "--no-access-log" in serve_args else []
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "hello_app:app", "--app-dir", str(HERE),
                                 "--port", str(port), "--log-level", "info", *access],
                                stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
        try:
            url = f"http://127.0.0.1:{port}"
            _wait(f"{url}/hello", proc)
            yield url
        finally:
            proc.terminate()
            proc.wait(20)


def _wait(url: str, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        if proc.poll() is not None:
            raise SystemExit(f"the hello server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):  # noqa: S310 (loopback)
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the hello server did not answer in 30 s")


def _report(results: dict[str, list[tuple[float, float, str]]], args: argparse.Namespace) -> str:
    rates = {name: median([r for r, _, _ in runs]) or 0.0 for name, runs in results.items()}
    p99s = {name: median([p for _, p, _ in runs]) or 0.0 for name, runs in results.items()}
    healthz = rates[HEALTHZ]
    rows = []
    for name, runs in results.items():
        problems = "; ".join(sorted({p for _, _, p in runs if p})) or "none"
        rows.append([name, f"{rates[name]:,.0f}", f"{p99s[name]:.1f}", f"{rates[name] / healthz:.0%}",
                     ", ".join(f"{r:,.0f}" for r, _, _ in runs), problems])
    return "\n".join([
        machine_info(["fastapi", "uvicorn", "sqlalchemy", "httptools", "uvloop"]),
        f"- load average before / after: {args.load_before} / {_load()}", "",
        table(["endpoint", "median req/s", "median p99 ms", "of /healthz", "rounds req/s", "errors"], rows),
        "", f"wrk -t1 -c{args.connections} -d{args.seconds}s, "
        f"{args.rounds} alternating rounds per endpoint, one `hfvet serve` (one uvicorn worker), "
        f"access log {'off' if args.no_access_log else 'on'}.", "",
        _summary(rates, p99s),
    ])


def _summary(rates: dict[str, float], p99s: dict[str, float]) -> str:
    """One line a reader can grep: the gate's medians against issue 10's three targets."""
    gate, of_healthz = rates[GATE], rates[GATE] / rates[HEALTHZ]
    checks = [(f"rate {gate:,.0f} req/s >= {TARGET_RATE:,.0f}", gate >= TARGET_RATE),
              (f"p99 {p99s[GATE]:.1f} ms < {TARGET_P99_MS:g}", p99s[GATE] < TARGET_P99_MS),
              (f"{of_healthz:.0%} of /healthz >= {TARGET_OF_HEALTHZ:.0%}", of_healthz >= TARGET_OF_HEALTHZ)]
    verdicts = ", ".join(f"{text}: {'met' if ok else 'NOT MET'}" for text, ok in checks)
    return (f"SUMMARY GET /gate: {verdicts} (same run: bare FastAPI hello {rates[HELLO]:,.0f} req/s, "
            f"bare ASGI {rates[RAW]:,.0f} req/s; the gate is {gate / rates[RAW]:.0%} of the bare ASGI rate)")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
