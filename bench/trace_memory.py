"""Trace what the API process keeps per vet: RSS split into its parts, tracemalloc and the collector.

What: one `hfvet serve` gets `--vets` POST /vet?wait=120 over the example repos, one after another,
while `--gate-threads` client threads keep GET /gate of an approved commit busy (the soak's wrk, in
small; `--not-gated`: the vets leave out the gated repo, whose stored reports then stay one, so an
uncached gate answer reads the same rows however many vets ran). `--queue inline` (default): the
vets run in the server's threads on SQLite, the fixture hub in this process (as
`live_server.prepared_server`); `--queue procrastinate`: a throwaway PostgreSQL database, the hub,
`--workers` `hfvet worker`s and an API that only queues (as `bench_soak.py`).
Every `--every` vets it samples the server's RSS and what the server reports of itself through
`trace_memory_site/sitecustomize.py` (put first on its PYTHONPATH): tracemalloc's traced bytes,
SQLite's own heap (`sqlite3_memory_used`: its page caches), glibc's heap in use and free in it
(`mallinfo2`), pymalloc's arenas and the bytes in use in them (0 while tracemalloc wraps it), the
live threads, and the collector (the share of 50 ms polls that found it off, i.e. inside a pickle
walk's pause, `gc.get_count()`, `len(gc.get_objects())`, `len(gc.garbage)`; with `--collect each`
a `gc.collect()` before every sample, and what it freed). Tracing starts at the first sample (the
imports stay out of it), the baseline snapshot is the second; at the end it prints
`compare_to(baseline, 'lineno')` and `(..., 'traceback')`.

Run: `PYTHONPATH=$PWD .venv/bin/python bench/trace_memory.py --vets 600 --every 50 --gate-threads 4
--no-tracemalloc` (tracemalloc slows the server about 4x: use it with fewer vets and `--frames 4`).
Bounded: each vet waits at most 120 s, each answer of the server 300 s; about 4 minutes for 600 vets
on 2 cores. Reports one line per sample, the RSS slope per vet after the first sample and, traced,
the top growth lines.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_workers import fresh_database, process, python_m, token, wait_for_line, wait_http
from live_server import REPO, ROOT, hfvet

from app.cli.child_server import child_server, free_port
from app.examples import build_examples
from app.examples.catalog import EXAMPLES
from app.hubfixture import FixtureHub

KIB, MIB = 1024, 1024 * 1024
REPORT_TIMEOUT = 300.0  # a traced snapshot and its comparison take a while on a loaded machine
NO_WRITE_LIMIT = {"HFVET_RATE_LIMIT_BURST": "100000"}  # one client vets back to back, past the write burst

SITE = Path(__file__).resolve().parent / "trace_memory_site"  # its sitecustomize answers from the server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vets", type=int, default=300, help="POST /vet?wait=120 to send (bounded)")
    parser.add_argument("--every", type=int, default=25, help="sample every N vets")
    parser.add_argument("--frames", type=int, default=8, help="tracemalloc frames per trace")
    parser.add_argument("--top", type=int, default=12, help="growth lines to print")
    parser.add_argument("--not-gated", action="store_true",
                        help="vet every example repo but the one the gate threads ask about (its reports stay 1)")
    parser.add_argument("--gate-threads", type=int, default=0, help="client threads on GET /gate meanwhile")
    parser.add_argument("--collect", choices=("end", "each"), default="end",
                        help="gc.collect() in the server before the last sample only, or before each")
    parser.add_argument("--no-tracemalloc", action="store_true", help="RSS and collector only")
    parser.add_argument("--serve-env", action="append", default=[], metavar="K=V", help="extra server env")
    parser.add_argument("--queue", choices=("inline", "procrastinate"), default="inline",
                        help="inline: vets in the server (SQLite); procrastinate: in `--workers` `hfvet worker`s")
    parser.add_argument("--workers", type=int, default=2, help="`hfvet worker` processes (procrastinate)")
    parser.add_argument("--database-url", help="PostgreSQL to create a throwaway database from (procrastinate)",
                        default=os.environ.get("HFVET_TEST_DATABASE_URL",
                                               "postgresql+psycopg://postgres@127.0.0.1:5432/test"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hfvet-trace-") as tmp:
        work = Path(tmp)
        build_examples(work / "hub")
        (work / "trace").mkdir()
        served = _procrastinate(work, args) if args.queue == "procrastinate" else _inline(work, args)
        with served as (url, sha, secret):
            _run(url, sha, secret, work / "trace", args)


def _server_env(work: Path, args: argparse.Namespace) -> dict[str, str]:
    """What the API process gets on top of the service's env: the sitecustomize and where it answers."""
    env = {"PYTHONPATH": f"{SITE}{os.pathsep}{ROOT}", "HFVET_TRACE_DIR": str(work / "trace"),
           **dict(kv.split("=", 1) for kv in args.serve_env)}
    if not args.no_tracemalloc:
        env["HFVET_TRACE_FRAMES"] = str(args.frames)
    return env


@contextmanager
def _inline(work: Path, args: argparse.Namespace) -> Iterator[tuple[str, str, str]]:
    """The fixture hub in this process, `hfvet serve` with the in-process queue on SQLite: (url, sha, token)."""
    with FixtureHub(work / "hub") as hub:
        env = {"HF_ENDPOINT": hub.url, "HFVET_DATABASE_URL": f"sqlite:///{work}/store.db", **NO_WRITE_LIMIT}
        vetted = hfvet("vet", REPO, "--policy", "default", "--format", "json", env=env)
        if vetted.returncode != 0:
            raise SystemExit(f"vetting {REPO} failed: {vetted.stderr[-2000:]}")
        secret = hfvet("token", "create", "--role", "vetter", "--name", "trace", env=env).stdout.split()[-1]
        serve_env = {**os.environ, **env, **_server_env(work, args)}
        with child_server(serve_env, work / "serve.log", ("--no-access-log",), cwd=ROOT) as url:
            yield url, json.loads(vetted.stdout)["revision"], secret


@contextmanager
def _procrastinate(work: Path, args: argparse.Namespace) -> Iterator[tuple[str, str, str]]:
    """Hub, API (queues only) and `--workers` workers as processes on a throwaway PostgreSQL database."""
    with ExitStack() as stack:
        store = stack.enter_context(fresh_database(args.database_url))
        hub_port, api_port = free_port(), free_port()
        hub_url, api = f"http://127.0.0.1:{hub_port}", f"http://127.0.0.1:{api_port}"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_ENDPOINT": hub_url, "HFVET_DATABASE_URL": store,
               "HFVET_QUEUE": "procrastinate", "HF_HOME": str(work / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1",
               **NO_WRITE_LIMIT}
        subprocess.run(python_m("db", "upgrade"), cwd=ROOT, env=env, check=True, capture_output=True)
        secret = token(env, "trace")
        hub = python_m("hub", "serve", "--root", str(work / "hub"), "--port", str(hub_port), "--quiet")
        stack.enter_context(process(hub, env, work / "hub.log"))
        wait_http(f"{hub_url}/api/models/{REPO}")
        vetted = hfvet("vet", REPO, "--policy", "default", "--format", "json", env=env)
        if vetted.returncode != 0:
            raise SystemExit(f"vetting {REPO} failed: {vetted.stderr[-2000:]}")
        logs = [work / f"worker-{i + 1}.log" for i in range(args.workers)]
        for log in logs:
            stack.enter_context(process(python_m("worker", "--concurrency", "1"), env, log))
            wait_for_line(log, "hfvet worker:")
        serve = python_m("serve", "--port", str(api_port), "--no-access-log")
        stack.enter_context(process(serve, {**env, **_server_env(work, args)}, work / "api.log"))
        wait_http(f"{api}/healthz")
        yield api, json.loads(vetted.stdout)["revision"], secret


def _run(url: str, sha: str, secret: str, trace: Path, args: argparse.Namespace) -> None:
    server = _server_process(url)
    stop = threading.Event()
    gates = [threading.Thread(target=_gate_loop, args=(url, sha, stop), daemon=True) for _ in range(args.gate_threads)]
    for thread in gates:
        thread.start()
    repos = [example.repo_id for example in EXAMPLES if not (args.not_gated and example.repo_id == REPO)]
    samples: list[dict[str, float]] = []
    failed = 0
    began = time.monotonic()
    try:
        for done in range(args.vets + 1):
            if done % args.every == 0:
                request = {"baseline": int(len(samples) == 1),  # after the first --every vets: scanners loaded
                           "collect": int(args.collect == "each" or done == args.vets)}
                samples.append(_sample(done, server, trace, time.monotonic() - began, request))
                print(_line(samples[-1]), flush=True)
            if done < args.vets:
                failed += _vet(url, repos[done % len(repos)], secret) != "done"
        top = _ask(trace, {"top": args.top, "frames": args.frames}).get("top", [])
    finally:
        stop.set()
    print(f"\nvets {args.vets} (failed {failed}), RSS slope after the first sample: {_slope(samples):.1f} KiB/vet")
    for stat in top:
        print(f"\n{stat['size_diff'] / KIB:+.1f} KiB in {stat['count_diff']:+d} blocks")
        print("\n".join(stat["traceback"]))


def _server_process(url: str) -> psutil.Process:
    port = url.rsplit(":", 1)[1]
    for child in psutil.Process().children(recursive=True):
        if "serve" in child.cmdline() and port in child.cmdline():
            return child
    raise SystemExit(f"no hfvet serve child on port {port}")


def _vet(url: str, repo: str, secret: str) -> str:
    request = urllib.request.Request(  # noqa: S310 - loopback only
        f"{url}/vet?repo={repo}&wait=120", method="POST", headers={"Authorization": f"Bearer {secret}"})
    try:
        with urllib.request.urlopen(request, timeout=180) as response:  # noqa: S310 - loopback only
            return str(json.load(response)["job"]["status"])
    except OSError as exc:
        return f"error: {exc}"


def _gate_loop(url: str, sha: str, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            with urllib.request.urlopen(f"{url}/gate?repo={REPO}&revision={sha}", timeout=30):  # noqa: S310
                pass
        except OSError:
            time.sleep(0.1)


_asked = iter(range(1, 1_000_000))


def _ask(trace: Path, request: dict[str, int]) -> dict[str, object]:
    """One report from the server's trace thread (bounded wait)."""
    n = next(_asked)
    (trace / f"{n:06d}.req").write_text(json.dumps(request))
    answer = trace / f"{n:06d}.json"
    deadline = time.monotonic() + REPORT_TIMEOUT
    while not answer.exists():
        if time.monotonic() > deadline:
            raise SystemExit("the server's trace thread did not answer")
        time.sleep(0.05)
    state = dict(json.loads(answer.read_text()))
    if "error" in state:
        raise SystemExit(f"the server's trace thread failed: {state['error']}")
    return state


NATIVE = ("traced", "sqlite", "malloc_used", "malloc_free", "pymalloc_arenas", "pymalloc_used")
COUNTS = ("objects", "garbage", "freed", "off", "threads")


def _sample(done: int, server: psutil.Process, trace: Path, at: float, request: dict[str, int]) -> dict[str, float]:
    state = _ask(trace, request)
    count = state["count"]
    assert isinstance(count, list)
    figures = {key: float(str(state[key])) for key in (*NATIVE, *COUNTS)}
    return {"vets": done, "at": at, "rss": server.memory_info().rss, **figures,
            "enabled": float(bool(state["enabled"])), "gen0": count[0], "gen1": count[1], "gen2": count[2]}


def _line(s: dict[str, float]) -> str:
    mib = " ".join(f"{key} {s[key] / MIB:.1f}" for key in ("rss", *NATIVE))
    return (f"vets {s['vets']:4.0f} t {s['at']:5.0f}s MiB: {mib} | objects {s['objects']:.0f} "
            f"garbage {s['garbage']:.0f} freed {s['freed']:.0f} threads {s['threads']:.0f} "
            f"gc off {100 * s['off']:.0f}% of polls, now {'on' if s['enabled'] else 'OFF'}, "
            f"count ({s['gen0']:.0f}, {s['gen1']:.0f}, {s['gen2']:.0f})")


def _slope(samples: list[dict[str, float]]) -> float:
    if len(samples) < 3:
        return 0.0
    first, last = samples[1], samples[-1]
    return (last["rss"] - first["rss"]) / KIB / max(1.0, last["vets"] - first["vets"])


if __name__ == "__main__":
    main()
