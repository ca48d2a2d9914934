"""Gate fan-out (issue 25): hub requests and answer time for a vetted repo naming 3,000 repos by branch.

A SQLite store holds one report of `nvidia/fanout-pipelines` whose config's `custom_pipelines` name
3,000 other orgs' repos, unpinned (none exists on the hub: each resolution is a 404). `hfvet serve`
from ``--tree`` (a checkout: this one, or main's for "before") answers `GET /gate` for its commit
while a byte-counting fixture hub counts every request. Measured: one caller's answer time (median
of ``--single`` answers), then ``--callers`` concurrent callers for ``--seconds``: hub requests per
minute, answers completed and their median time, `/healthz` median time during the load, hub requests
in the 10 s after the callers gave up, and how long SIGTERM takes to stop the server afterwards (killed past 30 s).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import emit, machine_info, make_parser, median, table
from counting_hub import counting_hub

from app.cli.child_server import free_port
from app.core.pipeline import vet
from app.core.policy import load_policy, make_decide
from app.core.scanners.repo_refs_scanner import RepoReferenceScanner
from app.db.repository import save_report
from app.db.session import Store
from app.settings import Settings
from tests.fakes import MemorySource

REPO, SHA = "nvidia/fanout-pipelines", "f" * 40


def config(n: int) -> bytes:
    pipelines = {f"task-{i}": {"impl": f"org{i}/pipe-{i}--pipeline.Pipe"} for i in range(n)}
    return json.dumps({"model_type": "bert", "custom_pipelines": pipelines}).encode()


def seed(tree: Path, url: str, n: int) -> None:
    """Migrate with the tree's own migrations, then store the report as a vet from the hub would."""
    subprocess.run([sys.executable, "-m", "app", "db", "upgrade"], cwd=tree, check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(tree), "HFVET_DATABASE_URL": url})
    policy = load_policy(Settings().resolve_policy(Path("default")))
    source = MemorySource({"config.json": config(n)}, repo_id=REPO, revision=SHA,
                          facts={"endpoint": "http://127.0.0.1:9"})
    report = vet(source, [RepoReferenceScanner()], decide=make_decide(policy))
    store = Store(url)
    with store.session() as session:
        save_report(session, report, requested_revision="main", actor="bench")
    store.close()


def start(tree: Path, hub: str, url: str, home: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HFVET_"))}
    env |= {"PYTHONPATH": str(tree), "HF_ENDPOINT": hub, "HFVET_DATABASE_URL": url, "HF_HOME": str(home / "hf"),
            "HF_HUB_DISABLE_XET": "1", "HFVET_RATE_LIMIT_BURST": "100000"}
    log = (home / "serve.log").open("ab")
    proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", str(port), "--no-access-log"], cwd=tree,
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("hfvet serve did not start")


def one_answer(base: str, timeout: float = 600) -> float:
    started = time.perf_counter()
    httpx.get(f"{base}/gate", params={"repo": REPO, "revision": SHA}, timeout=timeout)
    return time.perf_counter() - started


def load(base: str, callers: int, seconds: float) -> tuple[list[float], list[float]]:
    """(answer times, /healthz times) of ``callers`` callers asking in a loop for ``seconds``."""
    answers: list[float] = []
    health: list[float] = []
    stop = time.monotonic() + seconds

    def caller() -> None:
        while time.monotonic() < stop:
            try:
                answers.append(one_answer(base, timeout=max(1.0, stop - time.monotonic())))
            except httpx.HTTPError:
                return  # still waiting when the time was up: given up, as a deploy script would

    threads = [threading.Thread(target=caller, daemon=True) for _ in range(callers)]
    for thread in threads:
        thread.start()
    while time.monotonic() < stop:
        started = time.perf_counter()
        try:
            httpx.get(f"{base}/healthz", timeout=30)
            health.append(time.perf_counter() - started)
        except httpx.HTTPError:
            health.append(30.0)
        time.sleep(0.5)
    for thread in threads:
        thread.join(5)
    return answers, health


def stop_time(proc: subprocess.Popen[bytes]) -> str:
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        return "> 30 s (killed)"
    return f"{time.monotonic() - started:.1f} s"


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1],
                        help="checkout whose `hfvet serve` is measured (default: this one)")
    parser.add_argument("--references", type=int, default=3000)
    parser.add_argument("--callers", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--single", type=int, default=3, help="one-caller answers timed first")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "hub").mkdir()
        emit(measure(args, Path(tmp)), args.out)


def measure(args: argparse.Namespace, home: Path) -> str:
    with counting_hub(home / "hub") as (hub, counter):
        url = f"sqlite:///{home / 'store.db'}"
        seed(args.tree.resolve(), url, args.references)
        proc, base = start(args.tree.resolve(), hub, url, home)
        try:
            counter.take()
            single = [one_answer(base) for _ in range(args.single)]
            single_hub = counter.take().requests / max(1, args.single)
            answers, health = load(base, args.callers, args.seconds)
            loaded = counter.take().requests
            time.sleep(10)
            after = counter.take().requests  # the callers have left: a server still resolving is wasting the hub
        finally:
            stopped = stop_time(proc)
    per_minute = loaded * 60 / args.seconds
    rows = [[str(args.tree), f"{median(single):.2f}", f"{single_hub:.0f}", f"{per_minute:,.0f}",
             str(len(answers)), f"{median(answers):.2f}" if answers else "none", f"{median(health):.2f}",
             str(after), stopped]]
    return "\n".join([
        machine_info(["uvicorn", "starlette", "sqlalchemy"]), "",
        f"{args.references} unpinned references; {args.callers} callers for {args.seconds:g} s.", "",
        table(["tree", "one answer s (median)", "hub requests / answer", "hub requests / min under load",
               "answers under load", "answer s under load (median)", "/healthz s (median)",
               "hub requests in the 10 s after", "SIGTERM to exit"], rows),
    ])


if __name__ == "__main__":
    main()
