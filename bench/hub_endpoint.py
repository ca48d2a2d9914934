"""Issue 28: a big file through the Hub endpoint vs straight from the fixture hub, on loopback, and the server's memory.

A fixture hub (`hfvet hub serve`, a subprocess) holds `nvidia/Bench-Endpoint-<size>`: one safetensors file of
``--size`` data bytes (real header, 64 MiB BF16 tensors, deterministic pseudo-random data, its real sha256
declared in `.hub.json`) and a config. `hfvet vet` approves it for real (the verdict is checked), then two
`hfvet serve` processes read it through the endpoint (`/hub`): one without a blob cache, one with
`HFVET_HUB_CACHE_DIR`. Both verify every byte against the approved sha256.

Throughput, R rounds, interleaved (each round: every path once, with the real client then a raw GET):
  direct        the fixture hub itself
  upstream      the endpoint without cache: fixture hub -> hfvet (hashed in flight) -> client
  cache fill    the endpoint with a cache whose blob was deleted first: upstream + a verified copy to disk
  cache hit     the endpoint with the blob in its cache
The real client is `hf_hub_download(..., cache_dir=<fresh>)` in this process (it writes the file; deleted
after each run); the raw client is an httpx streaming GET that counts the body and writes nothing, so it
isolates the servers. MB/s = file bytes / wall seconds (1 MB = 10^6 bytes); every run's byte count is checked.
CPU seconds (user + sys, psutil) of the fixture hub and of the hfvet serve answering are taken around each
pull and shown per GB: on a shared 2-core machine they drift far less than wall time, and they say which
process a slower path spends its time in. ``--server-env KEY=VALUE`` passes settings to both servers.

Memory: for each of ``--memory-sizes``, fresh servers; after a warm-up pull of config.json through the same
path, the server process's RSS is sampled every 50 ms (psutil) while a raw GET streams the big file: peak
minus the idle RSS just before. Flat in the file size means the same figure for every size.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import machine_info, make_parser, median, table
from endpoint_fixture import FILE, MIB, BigRepo, Proc, RssSampler, build_repo, parse_size, process, vet

PATHS = ("direct", "upstream", "cache fill", "cache hit")
CLIENTS = ("hf_hub_download", "raw GET")


# ---------------------------------------------------------------- clients


@dataclass
class Run:
    path: str
    client: str
    seconds: float
    bytes: int
    ok: bool
    error: str = ""
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds (user + sys) of "hub" and "hfvet"

    @property
    def mb_per_s(self) -> float | None:
        return self.bytes / self.seconds / 1e6 if self.ok and self.seconds > 0 else None

    def cpu_per_gb(self, who: str) -> float | None:
        return self.cpu[who] / (self.bytes / 1e9) if self.ok and who in self.cpu else None


def raw_get(url: str) -> tuple[int, str]:
    """Bytes of the body of a streaming GET (written nowhere), and an error if the status was not 200."""
    got = 0
    with httpx.Client(timeout=120, trust_env=False) as client, client.stream("GET", url) as response:
        for chunk in response.iter_raw():
            got += len(chunk)
        return got, "" if response.status_code == 200 else f"HTTP {response.status_code}"


def hf_pull(endpoint: str, repo: BigRepo, scratch: Path) -> tuple[int, str]:
    """``hf_hub_download`` into a fresh cache folder; the file's size on disk. The folder is removed."""
    from huggingface_hub import hf_hub_download

    cache = Path(tempfile.mkdtemp(prefix="hf-cache-", dir=scratch))
    try:
        local = hf_hub_download(repo.repo, FILE, revision=repo.sha, endpoint=endpoint, cache_dir=cache)
        return Path(local).stat().st_size, ""
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def cpu_seconds(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def timed(path: str, client: str, expected: int, pull: Callable[[], tuple[int, str]],
          watched: dict[str, int]) -> Run:
    """One pull, its wall seconds and the CPU seconds each ``watched`` process spent meanwhile."""
    before = {who: cpu_seconds(pid) for who, pid in watched.items()}
    began = time.perf_counter()
    try:
        got, error = pull()
    except Exception as exc:  # noqa: BLE001 - a failed pull is a result, never the end of the benchmark
        got, error = 0, f"{type(exc).__name__}: {exc}"[:300]
    seconds = time.perf_counter() - began
    cpu = {who: cpu_seconds(pid) - before[who] for who, pid in watched.items()}
    if not error and got != expected:
        error = f"{got} bytes, expected {expected}"
    return Run(path, client, seconds, got, not error, error, cpu)


def file_url(base: str, repo: BigRepo, name: str = FILE) -> str:
    return f"{base}/{repo.repo}/resolve/{repo.sha}/{name}"


# ---------------------------------------------------------------- memory


@dataclass
class Memory:
    size: int
    path: str
    idle: int
    peak: int
    after: int
    samples: int
    ok: bool


def measure_memory(server: Proc, repo: BigRepo, path: str) -> Memory:
    """Peak RSS of ``server`` while a raw GET streams the big file, after a warm-up on config.json."""
    base = f"{server.url}/hub"
    raw_get(file_url(base, repo, "config.json"))  # warm-up: the same code path, a small file
    time.sleep(0.3)
    sampler = RssSampler(server.pid)
    idle = sampler.rss()
    with sampler.sampling():
        got, error = raw_get(file_url(base, repo))
    return Memory(repo.file_bytes, path, idle, sampler.peak, sampler.rss(), sampler.samples,
                  not error and got == repo.file_bytes)


# ---------------------------------------------------------------- the benchmark


@dataclass
class Setup:
    hub: Proc
    store_url: str
    scratch: Path
    cache_dir: Path
    server_env: dict[str, str]

    def env(self, cache_dir: Path | None = None) -> dict[str, str]:
        cache = {} if cache_dir is None else {"HFVET_HUB_CACHE_DIR": str(cache_dir)}
        return {"HF_ENDPOINT": self.hub.url, "HFVET_DATABASE_URL": self.store_url, **self.server_env, **cache}


def blob_path(cache_dir: Path, sha256: str) -> Path:
    return cache_dir / "sha256" / sha256[:2] / sha256


def throughput(setup: Setup, plain: Proc, cached: Proc, repo: BigRepo, reps: int) -> list[Run]:
    """``reps`` rounds; each round every client pulls through every path once (the cache's blob is deleted
    before "cache fill", so "cache hit" right after finds it)."""
    servers = {"direct": None, "upstream": plain, "cache fill": cached, "cache hit": cached}
    runs: list[Run] = []
    for round_no in range(reps):
        for client in CLIENTS:
            for path in PATHS:
                server = servers[path]
                base = setup.hub.url if server is None else f"{server.url}/hub"
                if path == "cache fill":
                    blob_path(setup.cache_dir, repo.sha256).unlink(missing_ok=True)
                pull = (lambda b=base: hf_pull(b, repo, setup.scratch)) if client == CLIENTS[0] \
                    else (lambda b=base: raw_get(file_url(b, repo)))
                watched = {"hub": setup.hub.pid} | ({} if server is None else {"hfvet": server.pid})
                run = timed(path, client, repo.file_bytes, pull, watched)
                runs.append(run)
                shown = f"{run.mb_per_s:,.0f} MB/s" if run.ok else f"FAILED {run.error}"
                print(f"round {round_no + 1}/{reps} {client:16} {path:10} {run.seconds:6.2f} s {shown}",
                      file=sys.stderr)
    return runs


def memory_rounds(setup: Setup, repos: list[BigRepo]) -> list[Memory]:
    """Per size: a fresh server without cache (upstream), and one with an empty cache (fill, then hit)."""
    found: list[Memory] = []
    log = setup.scratch / "serve-memory.log"
    for repo in repos:
        with process(["serve", "--no-access-log"], setup.env(), log, "/healthz") as plain:
            found.append(measure_memory(plain, repo, "upstream"))
        cache_dir = setup.scratch / f"memory-cache-{repo.data_bytes}"
        with process(["serve", "--no-access-log"], setup.env(cache_dir), log, "/healthz") as cached:
            found.append(measure_memory(cached, repo, "cache fill"))
            found.append(measure_memory(cached, repo, "cache hit"))
        shutil.rmtree(cache_dir, ignore_errors=True)
        for m in found[-3:]:
            print(f"memory {repo.repo} {m.path}: idle {m.idle / MIB:.0f} MiB, +{(m.peak - m.idle) / MIB:.1f} MiB",
                  file=sys.stderr)
    return found


def cache_counts(server: Proc) -> dict[str, float]:
    """The blob cache's hit and miss counters from the server's /metrics."""
    with urllib.request.urlopen(f"{server.url}/metrics", timeout=10) as response:  # noqa: S310 - loopback
        text = response.read().decode()
    names = ("hfvet_hub_cache_hits_total", "hfvet_hub_cache_misses_total")
    return {line.split()[0]: float(line.split()[1]) for line in text.splitlines() if line.split(" ")[0] in names}


# ---------------------------------------------------------------- report


def summary(runs: list[Run]) -> dict[str, dict[str, dict[str, float | None]]]:
    """Per client and path: median MB/s and median CPU seconds per GB of the hub and of hfvet."""
    def pick(client: str, path: str) -> list[Run]:
        return [r for r in runs if r.client == client and r.path == path]

    return {client: {path: {"mb_per_s": median([r.mb_per_s for r in pick(client, path)]),
                            "hub_cpu_s_per_gb": median([r.cpu_per_gb("hub") for r in pick(client, path)]),
                            "hfvet_cpu_s_per_gb": median([r.cpu_per_gb("hfvet") for r in pick(client, path)])}
                     for path in PATHS} for client in CLIENTS}


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def throughput_table(runs: list[Run]) -> str:
    medians, rows = summary(runs), []
    for client in CLIENTS:
        direct = medians[client]["direct"]["mb_per_s"]
        for path in PATHS:
            mine = [r for r in runs if r.client == client and r.path == path]
            m = medians[client][path]
            value = m["mb_per_s"]
            rows.append([client, path, f"{sum(r.ok for r in mine)}/{len(mine)}", _num(value, ",.0f"),
                         ", ".join(f"{r.mb_per_s:,.0f}" if r.mb_per_s else "FAILED" for r in mine),
                         "-" if value is None or not direct else f"{value / direct:.0%}",
                         _num(m["hfvet_cpu_s_per_gb"], ".2f"), _num(m["hub_cpu_s_per_gb"], ".2f")])
    return table(["client", "path", "ok", "median MB/s", "runs (MB/s)", "vs direct", "hfvet CPU s/GB",
                  "hub CPU s/GB"], rows)


def memory_table(found: list[Memory]) -> str:
    rows = [[f"{m.size / MIB:,.0f} MiB", m.path, "yes" if m.ok else "NO", f"{m.idle / MIB:.1f}", f"{m.peak / MIB:.1f}",
             f"{(m.peak - m.idle) / MIB:+.1f}", f"{(m.after - m.idle) / MIB:+.1f}", str(m.samples)] for m in found]
    return table(["file", "path", "ok", "idle RSS (MiB)", "peak RSS (MiB)", "peak - idle", "after - idle",
                  "samples"], rows)


def main() -> int:
    parser = make_parser(__doc__)
    parser.add_argument("--size", default="2GiB", help="data bytes of the throughput file (default 2GiB)")
    parser.add_argument("--memory-sizes", default="512MiB,2GiB", help="file sizes for the RSS runs ('' skips)")
    parser.add_argument("--reps", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--root", type=Path, default=Path(tempfile.gettempdir()) / "hfvet-bench" / "endpoint-hub",
                        help="fixture hub root; generated repos are reused while their spec matches")
    parser.add_argument("--server-env", action="append", default=[], metavar="KEY=VALUE",
                        help="more environment for the hfvet serve processes (repeatable)")
    parser.add_argument("--json", type=Path, help="write every run and the medians here")
    args = parser.parse_args()
    size = parse_size(args.size)
    memory_sizes = [parse_size(s) for s in args.memory_sizes.split(",") if s.strip()]
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    with tempfile.TemporaryDirectory(prefix="hfvet-bench-endpoint-") as tmp:
        return run_all(args, size, memory_sizes, Path(tmp))


def run_all(args: Any, size: int, memory_sizes: list[int], tmp: Path) -> int:
    began = time.perf_counter()
    repos = {s: build_repo(args.root, s) for s in dict.fromkeys([size, *memory_sizes])}
    print(f"repos ready ({time.perf_counter() - began:.1f} s)", file=sys.stderr)
    server_env = dict(item.split("=", 1) for item in args.server_env)
    with process(["hub", "serve", "--root", str(args.root), "--quiet"], {}, tmp / "hub.log", "/api/models") as hub:
        setup = Setup(hub, f"sqlite:///{tmp}/store.db", tmp, tmp / "blob-cache", server_env)
        repos = {s: vet(r, hub.url, setup.store_url) for s, r in repos.items()}
        with process(["serve", "--no-access-log"], setup.env(), tmp / "serve.log", "/healthz") as plain, \
                process(["serve", "--no-access-log"], setup.env(setup.cache_dir), tmp / "serve.log",
                        "/healthz") as cached:
            runs = throughput(setup, plain, cached, repos[size], args.reps)
            counts = cache_counts(cached)
        shutil.rmtree(setup.cache_dir, ignore_errors=True)
        found = memory_rounds(setup, [repos[s] for s in memory_sizes])
    report(args, repos[size], runs, counts, found, time.perf_counter() - began)
    return 0 if all(r.ok for r in runs) and all(m.ok for m in found) else 1


def report(args: Any, repo: BigRepo, runs: list[Run], counts: dict[str, float], found: list[Memory],
           seconds: float) -> None:
    print(machine_info(["hfvet", "huggingface_hub", "httpx", "httpx2", "uvicorn", "starlette"]))
    print(f"- load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}; whole run {seconds:.0f} s")
    print(f"- file: `{repo.repo}` {FILE}, {repo.file_bytes:,} bytes; approved commit {repo.sha[:12]}; "
          f"{args.reps} rounds, interleaved; medians; MB/s = bytes / wall / 10^6; CPU = user + sys of the process")
    if args.server_env:
        print(f"- hfvet serve environment: {' '.join(args.server_env)}")
    print(f"- cache server's counters after the rounds: {counts}\n")
    print(throughput_table(runs))
    if found:
        print("\nServer RSS while a raw GET streams the file (sampled every 50 ms):\n")
        print(memory_table(found))
    for r in runs:
        if not r.ok:
            print(f"FAILED {r.client} {r.path}: {r.error}")
    if args.json:
        data = {"file": asdict(repo), "medians": summary(runs), "runs": [asdict(r) for r in runs],
                "memory": [asdict(m) for m in found], "cache_counters": counts, "server_env": args.server_env}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
