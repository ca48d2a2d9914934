"""What the gate's answer cache holds as distinct commits are vetted and asked about (in process, SQLite).

The soak (bench_soak.py, trace_memory.py) re-vets the same 5 example repos, so the gate cache keeps 5
answers however many vets run. A deployment vets a new commit each time, and every gated commit adds an
answer to the API's GateCache. This stores `--vets` approved reports of distinct repos with `--files`
files each (a manifest of that many entries), asks GET /gate's cached_gate for each once, and samples
tracemalloc's traced bytes, the cache's entries and the bytes of its answers every `--every` vets.
No HTTP, no hub; the cache is the API's own class with its defaults.
"""

from __future__ import annotations

import gc
import sys
import tempfile
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import emit, machine_info, make_parser, table

from app.core.findings import Severity
from app.core.pipeline import vet
from app.core.policy import load_policy, make_decide
from app.db.repository import save_report
from app.db.session import Store, upgrade
from app.services.gating import GateCache, cached_gate
from app.settings import Settings
from tests.fakes import MemorySource, TextScanner

HUB: dict[str, object] = {"endpoint": "http://127.0.0.1:9"}
KIB, MIB = 1024, 1024 * 1024


def no_hub(repo: str, revision: str) -> str:
    raise RuntimeError("exact commits never ask the hub")


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--vets", type=int, default=1000, help="distinct approved commits to store and gate")
    parser.add_argument("--files", type=int, default=200, help="files in each vetted repo (its manifest)")
    parser.add_argument("--every", type=int, default=100, help="sample every N vets")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args()
    policy = load_policy(Settings().resolve_policy(Path("default")))
    files = {f"shard-{i:05d}.json": b"{}" for i in range(args.files)}
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="hfvet-gate-cache-") as tmp:
        url = f"sqlite:///{tmp}/store.db"
        upgrade(url)
        store, cache = Store(url), GateCache()
        tracemalloc.start()
        base = 0
        for n in range(args.vets + 1):
            if n % args.every == 0:
                gc.collect()
                traced = tracemalloc.get_traced_memory()[0]
                base = base or traced
                entries = list(cache._entries.values())  # (version, day, answer): before and after the byte bound
                answer_bytes = sum(len(entry[-1].body) for entry in entries)
                rows.append([str(n), str(len(entries)), f"{answer_bytes / MIB:.1f}", f"{(traced - base) / MIB:.1f}",
                             f"{(traced - base) / KIB / max(n, 1):.1f}"])
            if n == args.vets:
                break
            repo, sha = f"nvidia/model-{n:05d}", f"{n:040x}"
            source = MemorySource(files, repo_id=repo, revision=sha, facts=HUB)
            report = vet(source, [TextScanner(Severity.CRITICAL)], decide=make_decide(policy))
            with store.session() as session:
                save_report(session, report, requested_revision="main", actor="bench")
            answer = cached_gate(cache, repo, sha, store=store, policy=policy, resolve=no_hub)
            assert answer.approved, answer.to_dict()
        store.close()
    headers = ["vets", "cached answers", "answer bytes MiB", "traced growth MiB", "KiB per vet"]
    emit("\n".join([machine_info([]), "", table(headers, rows), "",
                    f"{args.vets} distinct approved commits of {args.files} files each, each gated once "
                    f"(GateCache defaults: {_limits(GateCache())})."]), args.out)


def _limits(cache: GateCache) -> str:
    return ", ".join(f"{name.strip('_')} {value:,}" for name, value in vars(cache).items()
                     if name in ("_size", "_max_bytes"))


if __name__ == "__main__":
    main()
