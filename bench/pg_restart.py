"""A real PostgreSQL restart in the middle of vets on `hfvet worker`s: nothing half-written, no verdict
lost, no duplicate report, and the gate never approves what the store does not.

Not in CI: restarting the server cuts off every other PostgreSQL test running beside it. It needs
the local cluster and the right to restart it (`pg_ctlcluster VERSION main restart`, as root here).

As bench_workers: a fresh database, the fixture hub with `--latency-ms` per request (a vet takes
seconds), one API (HFVET_QUEUE=procrastinate) and `--workers` `hfvet worker`s (heartbeat 2 s). One
repo is vetted first (the gate's approved answer, asked all along by a thread); then `--vets`
copies of the example repo are posted. Once some reports are stored and other vets run, the cluster
is restarted (`--mode immediate`, the default, is a crash: WAL recovery at start; `fast` rolls back and
cuts every connection). Then, bounded by `--timeout`, until every vet
row is done or failed, re-posting the failed ones once (what a deploy script would do). Checks:
every row finished; a done row has exactly its one report, and each commit has as many reports as
done rows (no duplicate); an audit line per report; GET /gate answers each repo as its stored
verdict says (200 approved, 403 vetted and not approved, 404 never vetted); while the cluster was
down the gate answered only 200 (the approved answer, cached) or 503.
The last line, `SUMMARY ...`, says which held.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

import httpx
from sqlalchemy import Engine, create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_workers import (
    TEMPLATE,
    build_repos,
    fresh_database,
    process,
    python_m,
    token,
    wait_for_line,
    wait_http,
)
from benchlib import emit, machine_info, make_parser

from app.cli.child_server import free_port
from app.examples import build_example

ROOT = Path(__file__).resolve().parents[1]
TICK = 0.1


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--database-url", default=os.environ.get(
        "HFVET_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"))
    parser.add_argument("--cluster", default=_cluster(), help="`VERSION NAME` of the local cluster to restart")
    parser.add_argument("--mode", choices=("fast", "immediate"), default="immediate",
                        help="shutdown mode: immediate is a crash (WAL recovery at start), fast cuts connections")
    parser.add_argument("--latency-ms", type=float, default=100, help="the fixture hub's latency per request")
    parser.add_argument("--vets", type=int, default=12, help="repos vetted across the restart")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300, help="seconds for every vet to finish")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="hfvet-pg-restart-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        names = [f"bench/restart-{i:03d}" for i in range(args.vets)]
        build_example(work / "hub", TEMPLATE)
        build_repos(work / "hub", names)
        store = stack.enter_context(fresh_database(args.database_url))
        hub_port, api_port = free_port(), free_port()
        hub, api = f"http://127.0.0.1:{hub_port}", f"http://127.0.0.1:{api_port}"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_ENDPOINT": hub, "HFVET_DATABASE_URL": store,
               "HFVET_QUEUE": "procrastinate", "HF_HOME": str(work / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1",
               "HFVET_WORKER_HEARTBEAT_SECONDS": "2", "HFVET_RATE_LIMIT_BURST": "100000"}
        subprocess.run(python_m("db", "upgrade"), cwd=ROOT, env=env, check=True, capture_output=True)
        secret = token(env, "restart")
        stack.enter_context(process(python_m("hub", "serve", "--root", str(work / "hub"), "--port", str(hub_port),
                                             "--latency-ms", str(args.latency_ms), "--quiet"), env, work / "hub.log"))
        wait_http(f"{hub}/api/models/{TEMPLATE}")
        logs = [work / f"worker-{i}.log" for i in range(args.workers)]
        for log in logs:
            stack.enter_context(process(python_m("worker", "--concurrency", "1"), env, log))
            wait_for_line(log, "hfvet worker:")
        stack.enter_context(process(python_m("serve", "--port", str(api_port), "--no-access-log"), env,
                                    work / "api.log"))
        wait_http(f"{api}/healthz")
        client = stack.enter_context(httpx.Client(base_url=api, timeout=120,
                                                  headers={"Authorization": f"Bearer {secret}"}))
        approved = client.post("/vet", params={"repo": TEMPLATE, "wait": 120}).json()["report"]["revision"]
        watch = GateWatch(api, TEMPLATE, approved)
        watch.start()
        for name in names:
            client.post("/vet", params={"repo": name}).raise_for_status()
        engine = create_engine(store, pool_pre_ping=True)  # this script restarts the server under it
        stack.callback(engine.dispose)
        done_before = _wait_for_some_done(engine, names)
        restart = _restart(args.cluster, args.mode, watch)
        reposted = _finish(client, engine, names, args.timeout)
        watch.stop()
        checks = _checks(engine, client, names, watch)
    emit(_report(args, done_before, restart, reposted, watch, checks), args.out)


class GateWatch(threading.Thread):
    """GET /gate of an approved commit every 20 ms; counts the answers, apart while the cluster is down."""

    def __init__(self, api: str, repo: str, sha: str) -> None:
        super().__init__(daemon=True)
        self.url, self.params = f"{api}/gate", {"repo": repo, "revision": sha}
        self.down = threading.Event()
        self.halt = threading.Event()
        self.answers: dict[str, Counter[str]] = {"up": Counter(), "down": Counter()}

    def run(self) -> None:
        with httpx.Client(timeout=10) as client:
            while not self.halt.wait(0.02):
                phase = "down" if self.down.is_set() else "up"
                try:
                    status = str(client.get(self.url, params=self.params).status_code)
                except httpx.TransportError as exc:
                    status = type(exc).__name__
                self.answers[phase][status] += 1

    def stop(self) -> None:
        self.halt.set()
        self.join(30)


def _cluster() -> str:
    listed = subprocess.run(["pg_lsclusters", "--no-header"], capture_output=True, text=True, check=False).stdout
    first = listed.split()
    return " ".join(first[:2]) if len(first) >= 2 else "15 main"


def _wait_for_some_done(engine: Engine, names: list[str], timeout: float = 120) -> int:
    """Wait until at least one vet is done and one still runs: the restart lands in the middle."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        counts = _statuses(engine, names)
        if counts["done"] >= 1 and counts["running"] >= 1:
            return counts["done"]
        time.sleep(TICK)
    raise SystemExit(f"no vet done with another running after {timeout}s: {dict(_statuses(engine, names))}")


def _statuses(engine: Engine, names: list[str]) -> Counter[str]:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT status, count(*) FROM vets WHERE repo_id = ANY(:n) GROUP BY status"),
                            {"n": names})
        return Counter({status: int(n) for status, n in rows})


def _restart(cluster: str, mode: str, watch: GateWatch) -> dict[str, float]:
    """Restart the cluster in ``mode``; the seconds it took."""
    version, name = cluster.split()
    watch.down.set()
    started = time.monotonic()
    subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", "-m", mode, version, name, "restart"],
                   check=True, capture_output=True)
    restarted = time.monotonic()
    watch.down.clear()
    return {"restart": restarted - started}


def _finish(client: httpx.Client, engine: Engine, names: list[str], timeout: float) -> list[str]:
    """Wait until every repo's newest vet row is done or failed; re-post a repo whose row failed, once."""
    deadline = time.monotonic() + timeout
    reposted: list[str] = []
    while time.monotonic() < deadline:
        newest = _newest_rows(engine, names)
        terminal = len(newest) == len(names) and all(s in ("done", "failed") for s in newest.values())
        if terminal and all(s == "done" or n in reposted for n, s in newest.items()):
            return reposted
        for name, status in newest.items():
            if status == "failed" and name not in reposted:
                client.post("/vet", params={"repo": name}).raise_for_status()
                reposted.append(name)
        time.sleep(0.5)
    raise SystemExit(f"not every vet finished in {timeout}s: {dict(Counter(_newest_rows(engine, names).values()))}")


def _newest_rows(engine: Engine, names: list[str]) -> dict[str, str]:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT DISTINCT ON (repo_id) repo_id, status FROM vets WHERE repo_id = ANY(:n) "
                                 "ORDER BY repo_id, created_at DESC"), {"n": names})
        return {repo: status for repo, status in rows}


def _checks(engine: Engine, client: httpx.Client, names: list[str], watch: GateWatch) -> list[tuple[str, bool]]:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT repo_id, sha, status, report_pk, attempts FROM vets "
                                 "WHERE repo_id = ANY(:n)"), {"n": names}).all()
        reports = conn.execute(text(
            "SELECT r.repo_id, v.sha, count(*) FROM reports p JOIN revisions v ON p.revision_pk = v.id "
            "JOIN repos r ON v.repo_pk = r.id WHERE r.repo_id = ANY(:n) GROUP BY r.repo_id, v.sha"), {"n": names})
        per_commit = {(repo, sha): int(n) for repo, sha, n in reports}
        audit = int(conn.execute(text("SELECT count(*) FROM audit_log WHERE action = 'vet' AND subject LIKE "
                                      "'bench/restart-%'")).scalar_one())
        approving = set(conn.execute(text(
            "SELECT r.repo_id FROM reports p JOIN revisions v ON p.revision_pk = v.id JOIN repos r "
            "ON v.repo_pk = r.id WHERE r.repo_id = ANY(:n) AND p.verdict = 'approve'"), {"n": names}).scalars())
    done = Counter((r.repo_id, r.sha) for r in rows if r.status == "done")
    unfinished = [r for r in rows if r.status not in ("done", "failed")]
    done_without_report = [r for r in rows if r.status == "done" and r.report_pk is None]
    failed_with_report = [r for r in rows if r.status == "failed" and r.report_pk is not None]
    gate = {name: client.get("/gate", params={"repo": name}).status_code for name in names}
    done_repos = {repo for repo, _ in done}
    expected = {name: 200 if name in approving else 403 if name in done_repos else 404 for name in names}
    down = watch.answers["down"]
    return [
        (f"{len(rows)} vet rows, unfinished {len(unfinished)}", not unfinished),
        (f"done rows without a report {len(done_without_report)}, failed rows with one {len(failed_with_report)}",
         not done_without_report and not failed_with_report),
        (f"reports per commit equal done rows ({sum(per_commit.values())} reports, {sum(done.values())} done)",
         per_commit == dict(done)),
        (f"audit lines {audit} = reports", audit == sum(per_commit.values())),
        (f"gate answers as stored: {dict(Counter(gate.values()))} (approved {len(approving)}, "
          f"vetted {len(done_repos)})",
         gate == expected),
        (f"gate while the cluster was down: {dict(down)}", set(down) <= {"200", "503"}),
    ]


def _report(args: argparse.Namespace, done_before: int, restart: dict[str, float], reposted: list[str],
            watch: GateWatch, checks: list[tuple[str, bool]]) -> str:
    verdicts = ", ".join(f"{text_}: {'held' if ok else 'BROKEN'}" for text_, ok in checks)
    return "\n".join([
        machine_info(["sqlalchemy", "psycopg", "procrastinate"]),
        "",
        f"{args.vets} vets on {args.workers} workers, hub latency {args.latency_ms:g} ms; cluster `{args.cluster}` "
        f"restarted ({args.mode}) after {done_before} vet(s) were done, taking {restart['restart']:.1f} s; "
        f"re-posted after failing: {len(reposted)}; gate answers while up {dict(watch.answers['up'])}, "
        f"while down {dict(watch.answers['down'])}.",
        "",
        f"SUMMARY pg restart: {verdicts}",
    ])


if __name__ == "__main__":
    main()
