"""The gate under sustained loopback load while vets run: no error, p99 within target, memory flat.

`--queue inline` (default): one `hfvet serve` (one uvicorn worker, SQLite store, in-process queue,
the fixture hub over the example repos in this process; `--isolation process`, the default, runs the
vets in the server's child processes, `thread` in its threads). `--queue procrastinate --workers N`: a
fresh PostgreSQL database (`--database-url`), the fixture hub, one `hfvet serve` that only queues
(HFVET_QUEUE=procrastinate) and N `hfvet worker --concurrency 1` processes that run the vets.
`--nice` is HFVET_JOB_NICE for the vet processes or the workers (0: the API's own priority).
Back-to-back rounds of GET /gate for an approved exact sha: by default hey offers a steady
`--rate` (2,000 req/s, the performance target's rate: its p99 is the latency that load sees); with
`--rate 0` wrk sends as fast as it can (capacity, and queueing at saturation). Rounds alternate
"vetting" (a client thread re-vets the example repos one after another, POST /vet waiting for each
report, so the server's vet workers read and scan all the while) and "idle" (no vet in flight), so
the machine's noise hits both alike. Between rounds the RSS and CPU seconds of the API process (and
of each worker) are sampled.
Bounded: `--minutes` of load (default 3), `--seconds` per round.

Targets: no load-generator error and no non-2xx; every vet ends done (none failed); p99 under 20 ms
(issues 10/13, at 2,000 req/s) in the median round of each kind; RSS after the first third of the
rounds (warm-up: the scanners load) never more than 10% (+20 MiB) above the highest RSS of that
first third (the API's).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_gate import hey, wrk
from bench_workers import fresh_database, process, python_m, token, wait_for_line, wait_http
from benchlib import emit, machine_info, make_parser, median, table
from live_server import REPO, hfvet, prepared_server
from soak_trace import SchedStat, py_spy, traced

from app.cli.child_server import free_port
from app.examples import build_examples
from app.examples.catalog import EXAMPLES

ROOT = Path(__file__).resolve().parents[1]
TARGET_P99_MS = 20.0
RSS_SLACK, RSS_SLACK_BYTES = 0.10, 20 * 1024 * 1024
# One client re-vets back to back for minutes: several POST /vet a second, over the write rate limit's burst.
NO_WRITE_LIMIT = {"HFVET_RATE_LIMIT_BURST": "100000"}


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


@dataclass(frozen=True)
class Setup:
    """A running service to soak: the gate's URL, a vetter's token, the processes to sample (API first)."""

    url: str
    sha: str
    token: str
    watched: dict[str, psutil.Process]


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--minutes", type=float, default=3.0, help="minutes of load (bounded)")
    parser.add_argument("--seconds", type=int, default=15, help="seconds per wrk round")
    parser.add_argument("--connections", type=int, default=8, help="concurrent keep-alive connections")
    parser.add_argument(
        "--rate",
        type=float,
        default=2000.0,
        help="offered gate requests/s (hey, paced; the performance target's rate); 0: wrk as fast as it can",
    )
    parser.add_argument(
        "--queue",
        choices=("inline", "procrastinate"),
        default="inline",
        help="inline: vets in the server process (SQLite); procrastinate: in `hfvet worker`s",
    )
    parser.add_argument("--workers", type=int, default=2, help="`hfvet worker` processes (procrastinate)")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("HFVET_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"),
        help="PostgreSQL this script may create a fresh database from (procrastinate)",
    )
    parser.add_argument(
        "--isolation",
        choices=("process", "thread"),
        default="process",
        help="inline: HFVET_JOB_ISOLATION, vets in child processes of the server or in its threads",
    )
    parser.add_argument("--nice", type=int, default=10, help="HFVET_JOB_NICE of the vet processes / workers")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    parser.add_argument("--trace", type=Path, help="py-spy the API each round into this folder (bench/soak_trace.py)")
    args = parser.parse_args()
    for tool in ("wrk", "hey") if args.rate else ("wrk",):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (apt-get install {tool})")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: stop the children, drop the database
    if args.trace:
        args.trace.mkdir(parents=True, exist_ok=True)
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    started = (
        _procrastinate_service(args)
        if args.queue == "procrastinate"
        else _inline_service(args.isolation, args.nice)
    )
    with started as service:
        gate_url = f"{service.url}/gate?repo={REPO}&revision={service.sha}"
        wrk(gate_url, 2, args.connections)  # warm-up: the gate's cache, imports, connections
        vets = Vets()
        revetting = threading.Thread(target=_revet, args=(service.url, service.token, vets), daemon=True)
        revetting.start()
        rounds = _rounds(gate_url, service.watched, vets, args)
        vets.stop.set()
        vets.wanted.set()
        revetting.join(300)
    emit(_report(rounds, vets, args, load_before) + traced(args.trace, args.seconds), args.out)


@contextmanager
def _inline_service(isolation: str, nice: int) -> Iterator[Setup]:
    """`hfvet serve` with the in-process queue on SQLite (live_server's prepared store)."""
    env = {**NO_WRITE_LIMIT, "HFVET_JOB_ISOLATION": isolation, "HFVET_JOB_NICE": str(nice)}
    with prepared_server(extra_env=env, serve_args=("--no-access-log",)) as live:
        secret = hfvet("token", "create", "--role", "vetter", "--name", "soak", env=live.env).stdout.split()[-1]
        api = _server_process(live.url)
        watched = {"API": api}
        if isolation == "process":
            _vet_once(live.url, secret)  # the server's vet processes start with its first vet
            vet_children = [c for c in api.children() if "spawn_main" in " ".join(c.cmdline())]
            watched.update({f"vet process {i + 1}": child for i, child in enumerate(vet_children)})
        yield Setup(live.url, live.sha, secret, watched)


def _vet_once(url: str, token: str) -> None:
    request = urllib.request.Request(  # noqa: S310 - loopback only
        f"{url}/vet?repo={REPO}&wait=120", method="POST", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=180) as response:  # noqa: S310 - loopback only
        json.load(response)


@contextmanager
def _procrastinate_service(args: argparse.Namespace) -> Iterator[Setup]:
    """Hub, API and ``args.workers`` workers as processes on a fresh PostgreSQL database (as bench_workers)."""
    with tempfile.TemporaryDirectory(prefix="hfvet-bench-soak-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        build_examples(work / "hub")
        store = stack.enter_context(fresh_database(args.database_url))
        hub_port, api_port = free_port(), free_port()
        hub_url, api = f"http://127.0.0.1:{hub_port}", f"http://127.0.0.1:{api_port}"
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "HF_ENDPOINT": hub_url,
            "HFVET_DATABASE_URL": store,
            "HFVET_QUEUE": "procrastinate",
            "HF_HOME": str(work / "hf-home"),
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HFVET_JOB_NICE": str(args.nice),
            **NO_WRITE_LIMIT,
        }
        subprocess.run(python_m("db", "upgrade"), cwd=ROOT, env=env, check=True, capture_output=True)
        secret = token(env, "soak")
        stack.enter_context(
            process(
                python_m("hub", "serve", "--root", str(work / "hub"), "--port", str(hub_port), "--quiet"),
                env,
                work / "hub.log",
            )
        )
        wait_http(f"{hub_url}/api/models/{REPO}")
        vetted = hfvet("vet", REPO, "--policy", "default", "--format", "json", env=env)
        if vetted.returncode != 0:
            raise SystemExit(f"vetting {REPO} failed ({vetted.returncode}): {vetted.stderr[-2000:]}")
        logs = [work / f"worker-{i + 1}.log" for i in range(args.workers)]
        workers = [stack.enter_context(process(python_m("worker", "--concurrency", "1"), env, log)) for log in logs]
        for log in logs:
            wait_for_line(log, "hfvet worker:")
        api_proc = stack.enter_context(
            process(python_m("serve", "--port", str(api_port), "--no-access-log"), env, work / "api.log")
        )
        wait_http(f"{api}/healthz")
        watched = {"API": psutil.Process(api_proc.pid)}
        watched.update({f"worker {i + 1}": psutil.Process(w.pid) for i, w in enumerate(workers)})
        yield Setup(api, json.loads(vetted.stdout)["revision"], secret, watched)


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
                f"{url}/vet?repo={repo}&wait=120", method="POST", headers={"Authorization": f"Bearer {token}"}
            )
            try:
                with urllib.request.urlopen(request, timeout=180) as response:  # noqa: S310 - loopback only
                    status = json.load(response)["job"]["status"]
            except urllib.error.HTTPError as exc:
                status = f"HTTP {exc.code}: {exc.read()[:200]!r}"
                time.sleep(1)  # a refused vet must not turn the loop into a request storm
            if status == "done":
                vets.done += 1
            else:
                vets.failed.append(f"{repo}: {status}")


Round = dict[str, float | str]  # kind, at, rate, p99, problems, wall; "rss <name>" and "cpu <name>" per process
MIB = 1024 * 1024


def _cpu(process: psutil.Process) -> float:
    return float(sum(process.cpu_times()[:2]))


def _rounds(gate_url: str, watched: dict[str, psutil.Process], vets: Vets, args: argparse.Namespace) -> list[Round]:
    rounds: list[Round] = []
    began = time.monotonic()
    deadline = began + 60 * args.minutes
    cpu_before = {name: _cpu(proc) for name, proc in watched.items()}
    while time.monotonic() < deadline:
        kind = "idle" if len(rounds) % 2 else "vetting"
        if kind == "idle":
            vets.pause()
        else:
            vets.wanted.set()
            time.sleep(0.5)  # a vet under way before the round starts
        started, loop_before = time.monotonic(), SchedStat.of(watched["API"].pid)
        spy = args.trace and py_spy(watched["API"].pid, args.seconds, args.trace / f"{len(rounds):02d}-{kind}.txt")
        rate, p99, problems = (
            hey(gate_url, args.seconds, args.connections, args.rate)
            if args.rate
            else wrk(gate_url, args.seconds, args.connections)
        )
        loop_ran, loop_waited = SchedStat.of(watched["API"].pid).since(loop_before, time.monotonic() - started)
        if spy:
            spy.wait(60)
        one: Round = {
            "kind": kind,
            "at": time.monotonic() - began,
            "rate": rate,
            "p99": p99,
            "problems": problems,
            "wall": time.monotonic() - started,
            "vets": float(vets.done),
            "loop ran": loop_ran,
            "loop waited": loop_waited,
        }
        for name, proc in watched.items():
            cpu_now = _cpu(proc)
            one[f"rss {name}"], one[f"cpu {name}"] = float(proc.memory_info().rss), cpu_now - cpu_before[name]
            cpu_before[name] = cpu_now
        rounds.append(one)
    return rounds


def _rss_growth(rounds: list[Round], name: str) -> str:
    """RSS after the first round -> last, and the slope per vet done in between (KiB)."""
    first, last = rounds[0], rounds[-1]
    grew = float(last[f"rss {name}"]) - float(first[f"rss {name}"])
    vets = float(last["vets"]) - float(first["vets"])
    return (
        f"{name} {float(first[f'rss {name}']) / MIB:.1f} -> {float(last[f'rss {name}']) / MIB:.1f} MiB "
        f"({grew / 1024 / (vets or 1):+.0f} KiB per vet over {vets:.0f} vets)"
    )


def _load_line(args: argparse.Namespace) -> str:
    if args.rate:
        return (f"hey -c{args.connections} -q{args.rate / args.connections:g} -z{args.seconds}s "
                f"(offered {args.rate:,.0f} req/s)")
    return f"wrk -t1 -c{args.connections} -d{args.seconds}s (as fast as it can)"


def _report(rounds: list[Round], vets: Vets, args: argparse.Namespace, load_before: str) -> str:
    names = [key.removeprefix("rss ") for key in rounds[0] if key.startswith("rss ")]
    workers = [name for name in names if name != "API"]
    rows = [
        [
            f"{r['at']:.0f}",
            str(r["kind"]),
            f"{r['rate']:,.0f}",
            f"{r['p99']:.1f}",
            f"{float(r['rss API']) / MIB:.1f}",
            *([" / ".join(f"{float(r[f'rss {w}']) / MIB:.0f}" for w in workers)] if workers else []),
            f"{r['cpu API']:.1f}",
            f"{r['loop ran']:.0f} / {r['loop waited']:.0f}",
            *([f"{sum(float(r[f'cpu {w}']) for w in workers):.1f}"] if workers else []),
            f"{r['wall']:.1f}",
            str(r["problems"] or "none"),
        ]
        for r in rounds
    ]
    rss = [float(r["rss API"]) for r in rounds]
    p99s = [float(r["p99"]) for r in rounds]
    warm = max(1, len(rss) // 3)
    base = max(rss[:warm])
    flat = max(rss[warm:] or rss) <= base * (1 + RSS_SLACK) + RSS_SLACK_BYTES
    by_kind = {kind: [r for r in rounds if r["kind"] == kind] for kind in ("vetting", "idle")}
    p99_of = {k: median([float(r["p99"]) for r in rs]) or 0.0 for k, rs in by_kind.items()}
    rate_of = {k: median([float(r["rate"]) for r in rs]) or 0.0 for k, rs in by_kind.items()}
    errors = [str(r["problems"]) for r in rounds if r["problems"]]
    checks = [
        (f"load errors/non-2xx: {len(errors)}", not errors),
        (f"vets done {vets.done}, failed {len(vets.failed)}", vets.done > 0 and not vets.failed),
        *((f"median p99 while {k} {p99_of[k]:.1f} ms < {TARGET_P99_MS:g}", p99_of[k] < TARGET_P99_MS) for k in by_kind),
        (
            f"API RSS warm {base / MIB:.1f} -> max after {max(rss[warm:] or rss) / MIB:.1f} -> last "
            f"{rss[-1] / MIB:.1f} MiB flat",
            flat,
        ),
    ]
    verdicts = ", ".join(f"{text}: {'met' if ok else 'NOT MET'}" for text, ok in checks)
    if args.queue == "procrastinate":
        where = f"{len(workers)} `hfvet worker --concurrency 1` on PostgreSQL, the API only queues"
    elif workers:
        where = f"vets in {len(workers)} child processes of the server (in-process queue, SQLite)"
    else:
        where = "vets in the server's threads (in-process queue, SQLite, HFVET_JOB_ISOLATION=thread)"
    headers = [
        "t (s)",
        "vets",
        "req/s",
        "p99 ms",
        "API RSS MiB",
        *(["workers RSS MiB"] if workers else []),
        "API CPU s",
        "loop ran / waited ms/s",
        *(["workers CPU s"] if workers else []),
        "wall s",
        "errors",
    ]
    return "\n".join(
        [
            machine_info(["fastapi", "uvicorn", "sqlalchemy", *(["procrastinate", "psycopg"] if workers else [])]),
            f"- load average before / after: {load_before} / {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
            "",
            table(headers, rows),
            "",
            f"Queue {args.queue}: {where}. {_load_line(args)} rounds back to back for "
            f"{args.minutes:g} min alternating vetting/idle (median req/s vetting {rate_of['vetting']:,.0f}, idle "
            f"{rate_of['idle']:,.0f}: {rate_of['vetting'] / (rate_of['idle'] or 1):.0%}; worst round p99 "
            f"{max(p99s):.1f} ms); vets of {len(EXAMPLES)} example repos in a loop in the vetting rounds.",
            "",
            "RSS: " + "; ".join(_rss_growth(rounds, name) for name in names) + ".",
            "",
            f"SUMMARY soak ({args.queue}): {verdicts}"
            + (f" (failed vets: {'; '.join(vets.failed[:5])})" if vets.failed else ""),
        ]
    )


if __name__ == "__main__":
    main()
