"""The gate under sustained loopback load while vets run: no error, p99 within target, memory flat.

One `hfvet serve` (one uvicorn worker, SQLite store, the fixture hub over the example repos).
wrk keeps GET /gate for an approved exact sha busy in back-to-back rounds; rounds alternate
"vetting" (a client thread re-vets the example repos one after another, POST /vet waiting for each
report, so the server's vet workers read and scan all the while) and "idle" (no vet in flight), so
the machine's noise hits both alike. Between rounds the server's RSS and CPU seconds are sampled.
Bounded: `--minutes` of load (default 3), `--seconds` per wrk round.

Targets: no wrk error and no non-2xx; every vet ends done (none failed); p99 under 20 ms (issues
10/13) in the median round of each kind; RSS after the first third of the rounds (warm-up: the
scanners load) never more than 10% (+20 MiB) above the highest RSS of that first third.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_gate import wrk
from benchlib import emit, machine_info, make_parser, median, table
from live_server import REPO, hfvet, prepared_server

from app.examples.catalog import EXAMPLES

TARGET_P99_MS = 20.0
RSS_SLACK, RSS_SLACK_BYTES = 0.10, 20 * 1024 * 1024


@dataclass
class Vets:
    """What the re-vetting thread saw."""

    done: int = 0
    failed: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    wanted: threading.Event = field(default_factory=threading.Event)  # set: vet; clear: stay idle
    idle: threading.Event = field(default_factory=threading.Event)  # set while no vet is in flight

    def pause(self) -> None:
        """No new vet, and the one in flight finished (bounded wait)."""
        self.wanted.clear()
        self.idle.wait(300)


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--minutes", type=float, default=3.0, help="minutes of load (bounded)")
    parser.add_argument("--seconds", type=int, default=15, help="seconds per wrk round")
    parser.add_argument("--connections", type=int, default=8, help="concurrent keep-alive connections")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with prepared_server(serve_args=("--no-access-log",)) as live:
        server = _server_process(live.url)
        token = hfvet("token", "create", "--role", "vetter", "--name", "soak", env=live.env).stdout.split()[-1]
        gate_url = f"{live.url}/gate?repo={REPO}&revision={live.sha}"
        wrk(gate_url, 2, args.connections)  # warm-up: the gate's cache, imports, connections
        vets = Vets()
        revetting = threading.Thread(target=_revet, args=(live.url, token, vets), daemon=True)
        revetting.start()
        rounds = _rounds(gate_url, server, vets, args)
        vets.stop.set()
        vets.wanted.set()
        revetting.join(300)
    emit(_report(rounds, vets, args, load_before), args.out)


def _server_process(url: str) -> psutil.Process:
    """The `hfvet serve` child listening on ``url``'s port."""
    port = int(url.rsplit(":", 1)[1])
    for child in psutil.Process().children(recursive=True):
        if "serve" in child.cmdline() and str(port) in child.cmdline():
            return child
    raise SystemExit(f"no hfvet serve child on port {port}")


def _revet(url: str, token: str, vets: Vets) -> None:
    """Vet the example repos again and again until told to stop (a new job each time: the old one is done)."""
    repos = [example.repo_id for example in EXAMPLES]
    while not vets.stop.is_set():
        for repo in repos:
            vets.idle.set()
            while not vets.wanted.wait(0.2):
                if vets.stop.is_set():
                    return
            vets.idle.clear()
            request = urllib.request.Request(  # noqa: S310 - loopback only
f"{url}/vet?repo={repo}&wait=120", method="POST",
                                             headers={"Authorization": f"Bearer {token}"})
            try:
                with urllib.request.urlopen(request, timeout=180) as response:  # noqa: S310 - loopback only
                    status = json.load(response)["job"]["status"]
            except urllib.error.HTTPError as exc:
                status = f"HTTP {exc.code}: {exc.read()[:200]!r}"
            if status == "done":
                vets.done += 1
            else:
                vets.failed.append(f"{repo}: {status}")


Round = dict[str, float | str]


def _rounds(gate_url: str, server: psutil.Process, vets: Vets, args: argparse.Namespace) -> list[Round]:
    rounds: list[Round] = []
    began = time.monotonic()
    deadline = began + 60 * args.minutes
    cpu_before = sum(server.cpu_times()[:2])
    while time.monotonic() < deadline:
        kind = "idle" if len(rounds) % 2 else "vetting"
        if kind == "idle":
            vets.pause()
        else:
            vets.wanted.set()
            time.sleep(0.5)  # a vet under way before the round starts
        started = time.monotonic()
        rate, p99, problems = wrk(gate_url, args.seconds, args.connections)
        cpu_now = sum(server.cpu_times()[:2])
        rounds.append({"kind": kind, "at": time.monotonic() - began, "rate": rate, "p99": p99,
                       "problems": problems, "rss": float(server.memory_info().rss),
                       "cpu": cpu_now - cpu_before, "wall": time.monotonic() - started})
        cpu_before = cpu_now
    return rounds


def _report(rounds: list[dict[str, float | str]], vets: Vets, args: argparse.Namespace, load_before: str) -> str:
    mib = 1024 * 1024
    rows = [[f"{r['at']:.0f}", str(r["kind"]), f"{r['rate']:,.0f}", f"{r['p99']:.1f}", f"{float(r['rss']) / mib:.1f}",
             f"{r['cpu']:.1f} / {r['wall']:.1f}", str(r["problems"] or "none")] for r in rounds]
    rss = [float(r["rss"]) for r in rounds]
    p99s = [float(r["p99"]) for r in rounds]
    warm = max(1, len(rss) // 3)
    base = max(rss[:warm])
    flat = max(rss[warm:] or rss) <= base * (1 + RSS_SLACK) + RSS_SLACK_BYTES
    by_kind = {kind: [r for r in rounds if r["kind"] == kind] for kind in ("vetting", "idle")}
    p99_of = {k: median([float(r["p99"]) for r in rs]) or 0.0 for k, rs in by_kind.items()}
    rate_of = {k: median([float(r["rate"]) for r in rs]) or 0.0 for k, rs in by_kind.items()}
    errors = [str(r["problems"]) for r in rounds if r["problems"]]
    checks = [(f"wrk errors/non-2xx: {len(errors)}", not errors),
              (f"vets done {vets.done}, failed {len(vets.failed)}", vets.done > 0 and not vets.failed),
              *((f"median p99 while {k} {p99_of[k]:.1f} ms < {TARGET_P99_MS:g}", p99_of[k] < TARGET_P99_MS)
                for k in by_kind),
              (f"RSS warm {base / mib:.1f} -> max after {max(rss[warm:] or rss) / mib:.1f} -> last "
               f"{rss[-1] / mib:.1f} MiB flat", flat)]
    verdicts = ", ".join(f"{text}: {'met' if ok else 'NOT MET'}" for text, ok in checks)
    return "\n".join([
        machine_info(["fastapi", "uvicorn", "sqlalchemy"]),
        f"- load average before / after: {load_before} / {' '.join(f'{x:.2f}' for x in os.getloadavg())}", "",
        table(["t (s)", "vets", "req/s", "p99 ms", "server RSS MiB", "server CPU s / wall s", "errors"], rows), "",
        f"wrk -t1 -c{args.connections} -d{args.seconds}s rounds back to back for {args.minutes:g} min "
        f"alternating vetting/idle (median req/s vetting {rate_of['vetting']:,.0f}, idle {rate_of['idle']:,.0f}: "
        f"{rate_of['vetting'] / (rate_of['idle'] or 1):.0%}; worst round p99 {max(p99s):.1f} ms); vets of "
        f"{len(EXAMPLES)} example repos in a loop in the vetting rounds.", "",
        f"SUMMARY soak: {verdicts}" + (f" (failed vets: {'; '.join(vets.failed[:5])})" if vets.failed else ""),
    ])


if __name__ == "__main__":
    main()
