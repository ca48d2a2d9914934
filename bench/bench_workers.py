"""Vets per minute with 1, 2 and 4 `hfvet worker` processes against a hub with per-request latency,
and GET /gate with one and with two API replicas on the same PostgreSQL database.

Everything is a separate process running this checkout: the fixture hub (`hfvet hub serve
--latency-ms N`), one API (`hfvet serve`, HFVET_QUEUE=procrastinate) that queues the vets, and the
workers (`hfvet worker --concurrency 1` each), fresh per round and warmed by two untimed vets each.
Rounds alternate 1, 2, 4, 1, 2, 4, ... workers, each round vetting its own fresh repos (small
copies of the vendor example), so drift on the shared machine hits every count alike. A round's
time runs from the first POST /vet (8 at a time, while the workers already run) to the last job
done; CPU (utime + stime from /proc) is the workers' own and that of all our processes (workers,
API, hub) over the same span; "cores busy" is the latter over wall time, next to the machine's load.

The gate part vets one repo, then runs wrk against one replica, then against two at once (one wrk
each, half the connections each, summed), alternating. Needs PostgreSQL (--database-url: a
database this script may create databases from) and wrk.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_gate import wrk
from benchlib import emit, machine_info, make_parser, median, table
from sqlalchemy import Engine, create_engine, text

from app.cli.child_server import free_port
from app.examples import build_example

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = "nvidia/DeepSeek-V4-Flash-NVFP4"
FILES = ("config.json", "README.md", "model-00003-of-00003.safetensors")
TICK = 0.1
SUBMITTERS = 8


def python_m(*args: str) -> list[str]:
    return [sys.executable, "-m", "app", *args]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def fresh_database(admin_url: str) -> Iterator[str]:
    name = f"hfvet_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT", pool_pre_ping=True)  # survives a server restart
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def process(command: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as out:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.TransportError:
            pass
        time.sleep(TICK)
    raise SystemExit(f"{url} did not answer in {timeout}s")


def wait_for_line(log: Path, line: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while line not in log.read_text(errors="replace"):
        if time.monotonic() > deadline:
            raise SystemExit(f"no {line!r} in {log} after {timeout}s")
        time.sleep(TICK)


def build_repos(root: Path, names: list[str]) -> None:
    for name in names:
        (root / name).mkdir(parents=True)
        for file in FILES:
            shutil.copy(root / TEMPLATE / file, root / name / file)


def done_count(engine: Engine, names: list[str]) -> int:
    with engine.connect() as conn:
        query = text("SELECT count(*) FROM vets WHERE repo_id = ANY(:names) AND status IN ('done', 'failed')")
        return int(conn.execute(query, {"names": names}).scalar_one())


def token(env: dict[str, str], name: str) -> str:
    made = subprocess.run(python_m("token", "create", "--role", "admin", "--name", name), cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True)
    return made.stdout.strip().splitlines()[-1]


def submit(api: str, secret: str, names: list[str]) -> None:
    with (httpx.Client(base_url=api, headers={"Authorization": f"Bearer {secret}"}, timeout=60) as client,
          ThreadPoolExecutor(SUBMITTERS) as pool):  # POST /vet resolves on the slow hub: submit in parallel
        list(pool.map(lambda name: client.post("/vet", params={"repo": name}).raise_for_status(), names))


def wait_done(engine: Engine, names: list[str]) -> None:
    while done_count(engine, names) < len(names):
        time.sleep(TICK)


@dataclass
class Round:
    wall: float
    worker_cpu: float
    all_cpu: float  # workers, the API and the hub together
    load: float  # the machine's 1-minute load average at the end (other tenants included)


def vet_round(api: str, secret: str, engine: Engine, env: dict[str, str], warmup: list[str], names: list[str],
              workers: int, work: Path, others: list[int]) -> Round:
    """Wall and CPU seconds to vet ``names`` with ``workers`` fresh worker processes (``others``: API, hub pids).

    ``warmup`` vets go first, untimed: a worker's first vet pays for imports and compiling rules."""
    with ExitStack() as stack:
        logs = [work / f"worker-{uuid.uuid4().hex[:6]}.log" for _ in range(workers)]
        procs = [stack.enter_context(process(python_m("worker", "--concurrency", "1"), env, log)) for log in logs]
        for log in logs:
            wait_for_line(log, "hfvet worker:")
        submit(api, secret, warmup)
        wait_done(engine, warmup)
        pids = [p.pid for p in procs]
        workers_before, others_before = sum(map(cpu_seconds, pids)), sum(map(cpu_seconds, others))
        started = time.perf_counter()
        submit(api, secret, names)
        wait_done(engine, names)
        wall = time.perf_counter() - started
        worker_cpu = sum(map(cpu_seconds, pids)) - workers_before
        other_cpu = sum(map(cpu_seconds, others)) - others_before
    return Round(wall, worker_cpu, worker_cpu + other_cpu, os.getloadavg()[0])


def gate_rounds(api_urls: list[str], sha: str, rounds: int, seconds: int, connections: int) -> dict[str, list[float]]:
    """GET /gate req/s: all connections on one replica, then split over two (one wrk each, summed)."""
    paths = [url + f"/gate?repo={TEMPLATE}&revision={sha}" for url in api_urls]
    with ThreadPoolExecutor(len(paths)) as pool:
        list(pool.map(lambda url: wrk(url, 2, connections // 2), paths))  # warm: caches, connections
        rates: dict[str, list[float]] = {"1 replica": [], "2 replicas": []}
        for _ in range(rounds):
            rates["1 replica"].append(_checked(wrk(paths[0], seconds, connections)))
            both = list(pool.map(lambda url: wrk(url, seconds, connections // 2), paths))
            rates["2 replicas"].append(sum(_checked(one) for one in both))
    return rates


def _checked(result: tuple[float, float, str]) -> float:
    rate, _p99, problems = result
    if problems:
        raise SystemExit(f"wrk saw errors: {problems}")
    return rate


def vets_markdown(results: dict[int, list[Round]], counts: list[int], vets: int) -> str:
    base = median([vets / one.wall * 60 for one in results[counts[0]]]) or 1.0
    rows = []
    for k in counts:
        rates = [vets / one.wall * 60 for one in results[k]]
        rate = median(rates) or 0.0
        rows.append([str(k), f"{rate:,.0f}", f"{rate / base:.2f}x", f"{median([o.wall for o in results[k]]):.1f} s",
                     f"{median([o.worker_cpu / vets for o in results[k]]):.3f} s",
                     f"{median([o.all_cpu / vets for o in results[k]]):.3f} s",
                     f"{median([o.all_cpu / o.wall for o in results[k]]):.2f}",
                     f"{median([o.load for o in results[k]]):.1f}", ", ".join(f"{x:,.0f}" for x in rates)])
    return table(["workers", "vets/min (median)", "vs 1 worker", "wall per round", "worker CPU per vet",
                  "all CPU per vet", "cores busy (ours)", "load avg", "vets/min per round"], rows)


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--database-url", default=os.environ.get(
        "HFVET_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"))
    parser.add_argument("--latency-ms", type=float, default=50, help="the fixture hub's added latency per request")
    parser.add_argument("--vets", type=int, default=40, help="vets per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per worker count (alternating)")
    parser.add_argument("--workers", default="1,2,4", help="worker counts to compare")
    parser.add_argument("--gate-rounds", type=int, default=3)
    parser.add_argument("--gate-seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: stop the children, drop the database
    counts = [int(n) for n in args.workers.split(",")]

    with tempfile.TemporaryDirectory(prefix="hfvet-bench-workers-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        hub_root = work / "hub"
        build_example(hub_root, TEMPLATE)
        batches = {(k, r): [f"bench/r{r}-w{k}-{i:03d}" for i in range(args.vets)]
                   for r in range(args.rounds) for k in counts}
        warmups = {(k, r): [f"bench/warm-r{r}-w{k}-{i}" for i in range(2 * k)] for k, r in batches}
        build_repos(hub_root, [name for group in (batches, warmups) for names in group.values() for name in names])
        store = stack.enter_context(fresh_database(args.database_url))
        hub_port, api_port = free_port(), free_port()
        hub_url = f"http://127.0.0.1:{hub_port}"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_ENDPOINT": hub_url, "HFVET_DATABASE_URL": store,
               "HFVET_QUEUE": "procrastinate", "HF_HOME": str(work / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1",
               "HFVET_WORKER_HEARTBEAT_SECONDS": "2",
               "HFVET_RATE_LIMIT_BURST": "100000"}  # the bench posts its vets in a burst on purpose
        subprocess.run(python_m("db", "upgrade"), cwd=ROOT, env=env, check=True, capture_output=True)
        secret = token(env, "bench")
        hub_command = python_m("hub", "serve", "--root", str(hub_root), "--port", str(hub_port),
                               "--latency-ms", str(args.latency_ms), "--quiet")
        hub_proc = stack.enter_context(process(hub_command, env, work / "hub.log"))
        wait_http(f"{hub_url}/api/models/{TEMPLATE}")
        api = f"http://127.0.0.1:{api_port}"
        api_proc = stack.enter_context(process(python_m("serve", "--port", str(api_port), "--no-access-log"), env,
                                               work / "api.log"))
        wait_http(f"{api}/healthz")
        engine = create_engine(store)
        stack.callback(engine.dispose)

        results: dict[int, list[Round]] = {k: [] for k in counts}
        for r in range(args.rounds):
            for k in counts:
                one = vet_round(api, secret, engine, env, warmups[(k, r)], batches[(k, r)], k, work,
                                [api_proc.pid, hub_proc.pid])
                results[k].append(one)
                print(f"round {r + 1}, {k} workers: {args.vets} vets in {one.wall:.1f} s, workers' CPU "
                      f"{one.worker_cpu:.1f} s, all {one.all_cpu:.1f} s, load {one.load:.1f}", file=sys.stderr)
        vets_table = vets_markdown(results, counts, args.vets)

        # The gate: one repo vetted, then one replica vs two on the same database.
        with httpx.Client(base_url=api, headers={"Authorization": f"Bearer {secret}"}, timeout=120) as client:
            with ExitStack() as one_worker:
                one_worker.enter_context(process(python_m("worker"), env, work / "gate-worker.log"))
                answer = client.post("/vet", params={"repo": TEMPLATE, "wait": 100}).json()
            sha = answer["job"]["revision"]
        second_port = free_port()
        stack.enter_context(process(python_m("serve", "--port", str(second_port), "--no-access-log"), env,
                                    work / "api-2.log"))
        second = f"http://127.0.0.1:{second_port}"
        wait_http(f"{second}/healthz")
        gate = gate_rounds([api, second], sha, args.gate_rounds, args.gate_seconds, args.connections)
        gate_table = table(["API replicas", "GET /gate req/s (median)", "per round"],
                           [[k, f"{median(v):,.0f}", ", ".join(f"{x:,.0f}" for x in v)] for k, v in gate.items()])

    emit("\n".join([
        f"Hub latency {args.latency_ms:g} ms per request; {args.vets} vets per round, {args.rounds} rounds per "
        f"worker count, alternating; each worker `--concurrency 1`.", "",
        vets_table, "",
        f"GET /gate for an approved exact sha, wrk {args.connections} connections in all, {args.gate_seconds} s "
        f"rounds, alternating:", "",
        gate_table, "",
        machine_info(["procrastinate", "psycopg", "uvicorn", "sqlalchemy"]),
    ]), args.out)


if __name__ == "__main__":
    main()
