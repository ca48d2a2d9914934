"""What judging referenced repos costs an uncached gate answer (in process, SQLite, no HTTP).

Three repos, each with one stored report under the default policy, asked for by exact commit with
no gate cache, in alternating rounds: `plain` (no references: the recorded verdict is used),
`card` (a card `base_model` mention: the rules that read `referenced_repos` are run with every
reference unknown and approved, once per report and policy (memoized), and the recorded verdict
stands) and `adapter` (another org's adapter base, pinned: every answer re-decides the adapter's
report and asks the store for the base's reports, which it re-decides too).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import emit, machine_info, make_parser, median, ratio, table

from app.core.findings import Severity
from app.core.pipeline import vet
from app.core.policy import load_policy, make_decide
from app.core.scanners.repo_refs_scanner import RepoReferenceScanner
from app.db.repository import save_report
from app.db.session import Store, upgrade
from app.services.gating import gate
from app.settings import Settings
from tests.fakes import MemorySource, TextScanner

HUB: dict[str, object] = {"endpoint": "http://127.0.0.1:9"}
BASE_SHA = "b" * 40
REPOS = {  # name -> (repo id, commit, files)
    "plain": ("nvidia/plain", "1" * 40, {"config.json": b"{}"}),
    "card": ("nvidia/quant", "2" * 40, {"README.md": b"---\nbase_model: meta-llama/Llama-3.1-8B\n---\n"}),
    "adapter": ("nvidia/lora", "3" * 40, {"adapter_config.json": json.dumps(
        {"base_model_name_or_path": "meta-llama/base", "revision": BASE_SHA}).encode()}),
}


def no_hub(repo: str, revision: str) -> str:
    raise RuntimeError("the benchmark never asks the hub")


def seeded(root: Path) -> Store:
    url = f"sqlite:///{root / 'store.db'}"
    upgrade(url)
    store = Store(url)
    policy = load_policy(Settings().resolve_policy(Path("default")))
    wanted = [*REPOS.values(), ("meta-llama/base", BASE_SHA, {"config.json": b"{}"})]
    for repo, sha, files in wanted:
        source = MemorySource(files, repo_id=repo, revision=sha, facts=HUB)
        report = vet(source, [RepoReferenceScanner(), TextScanner(Severity.CRITICAL)], decide=make_decide(policy))
        with store.session() as session:
            save_report(session, report, requested_revision="main", actor="bench")
    return store


def timed(store: Store, repo: str, sha: str, calls: int) -> tuple[float, float]:
    """(wall ms, CPU ms) per gate() call."""
    policy = load_policy(Settings().resolve_policy(Path("default")))
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        assert gate(repo, sha, store=store, policy=policy, resolve=no_hub).approved
    return ((time.perf_counter() - wall) * 1000 / calls, (time.process_time() - cpu) * 1000 / calls)


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=5, help="rounds per repo (alternating)")
    parser.add_argument("--calls", type=int, default=200, help="gate() calls per round")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = seeded(Path(tmp))
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in REPOS}
        for _ in range(args.rounds):
            for name, (repo, sha, _files) in REPOS.items():
                results[name].append(timed(store, repo, sha, args.calls))
        store.close()
    plain = median([w for w, _ in results["plain"]])
    rows = [[name, f"{median([w for w, _ in runs]):.2f}", f"{median([c for _, c in runs]):.2f}",
             ratio(median([w for w, _ in runs]), plain)] for name, runs in results.items()]
    emit("\n".join([
        machine_info(["sqlalchemy", "cel-python", "pydantic"]), "",
        table(["repo", "wall ms / call (median)", "CPU ms / call (median)", "wall vs plain"], rows),
    ]), args.out)


if __name__ == "__main__":
    main()
