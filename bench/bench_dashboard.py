"""Server time of the dashboard's home page over a store of 10,000 repos (issue 14: < 50 ms median).

Fills a SQLite store with N repos (default 10,000) of 60 orgs, a third of them with a second vetted
commit, verdicts mixed (about 60% approve, 25% review, 15% reject) under the active policy, and a
few hundred reviews. Then calls create_app's ASGI app in process (httpx's ASGITransport, no socket),
case after case in turn, so that drift on a shared machine hits every case alike; wall and CPU time
per request. The last line says whether the filtered page met the target.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import insert

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import emit, machine_info, make_parser, median, table

from app.db.models import RepoRow, ReportRow, ReviewRow, RevisionRow
from app.db.repos import OrgFilter, repo_page
from app.server import create_app
from app.services.listing import encode_cursor
from app.services.policies import active_policy
from app.services.store import open_store
from app.settings import Settings

TARGET_MS = 50.0
VENDORS = ["nvidia", "deepseek-ai", "meta-llama", "Qwen", "mistralai"]  # vendor-official in the default policy


def sha_of(*parts: object) -> str:
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()  # noqa: S324 - a fake commit id


def document(repo: str, sha: str, verdict: str, policy: tuple[str, str]) -> dict[str, Any]:
    """A small §6.2 report, as a vet from the hub would have stored it."""
    # A typical quantized checkpoint: a dozen shards and configs, a few info findings.
    names = [(f"model-{k:05d}-of-00008.safetensors", 4 << 30, "safetensors") for k in range(1, 9)]
    names += [("config.json", 900, "text"), ("tokenizer.json", 9 << 20, "text"),
              ("tokenizer_config.json", 4000, "text"), ("README.md", 3000, "text")]
    files = [{"path": p, "size": s, "sha256": sha_of(repo, sha, p), "blob_id": None, "format": f, "scanned": True}
             for p, s, f in names]
    findings = [{"path": "README.md", "member": None, "scanner": "links", "rule": "upstream-link", "severity": "info",
                 "message": f"link to https://github.com/example/project{k}", "evidence": None, "source": None}
                for k in range(6)]
    return {"repo": repo, "revision": sha, "verdict": verdict,
            "reasons": [{"rule": f"bench-{verdict}", "decision": verdict, "message": "benchmark data"}],
            "policy": {"name": policy[0], "sha256": policy[1]}, "findings": findings, "files": files,
            "stats": {"files": len(files), "repo_bytes": 4 << 30, "bytes_read": 1 << 20, "seconds": 1.0},
            "scanners": {}, "identity": {"endpoint": "http://127.0.0.1:9"}}


def fill(settings: Settings, repos: int, seed: int = 14) -> dict[str, str]:
    """Bulk-insert the benchmark store; returns names the cases use."""
    policy = active_policy(settings)
    ref = (policy.name, policy.sha256)
    rng = random.Random(seed)
    orgs = VENDORS + [f"org{i:02d}" for i in range(60 - len(VENDORS))]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    repo_rows, revision_rows, report_rows, review_rows = [], [], [], []
    for i in range(repos):
        org = orgs[i % len(orgs)]
        repo_id = f"{org}/model-{i:05d}"
        repo_rows.append({"id": i + 1, "repo_id": repo_id, "org": org, "name": f"model-{i:05d}",
                          "hub_id": sha_of("id", i)[:24], "author": org, "hub_created_at": "2025-06-01T00:00:00Z",
                          "first_seen": start})
        for commit in range(2 if i % 3 == 0 else 1):
            sha = sha_of(repo_id, commit)
            verdict = rng.choices(["approve", "review", "reject"], [60, 25, 15])[0]
            revision_pk, report_pk = len(revision_rows) + 1, len(report_rows) + 1
            revision_rows.append({"id": revision_pk, "repo_pk": i + 1, "sha": sha, "manifest": [],
                                  "first_seen": start})
            report_rows.append({"id": report_pk, "revision_pk": revision_pk, "verdict": verdict,
                                "policy_name": ref[0], "policy_sha256": ref[1], "requested_revision": "main",
                                "requested_by": "bench", "decided_at": start + timedelta(minutes=report_pk),
                                "document": document(repo_id, sha, verdict, ref)})
            if verdict == "review" and rng.random() < 0.1:
                review_rows.append({"report_pk": report_pk, "decision": "approve", "reason": "bench",
                                    "reviewer": "token:bench", "role": "reviewer", "at": start, "verdict": "review",
                                    "policy_sha256": ref[1]})
    store = open_store(settings)
    with store.session() as session:
        for model, rows in ((RepoRow, repo_rows), (RevisionRow, revision_rows), (ReportRow, report_rows),
                            (ReviewRow, review_rows)):
            for at in range(0, len(rows), 2000):
                session.execute(insert(model), rows[at:at + 2000])
    store.close()
    middle = sorted(r["repo_id"] for r in repo_rows)[len(repo_rows) // 2]
    return {"org": "org17", "cursor": encode_cursor(middle)}


def cases(names: dict[str, str]) -> dict[str, str]:
    return {
        "home (deployable, 50 rows)": "/ui/",
        "filtered: org + deployable": f"/ui/?org={names['org']}",
        "filtered: tier vendor-official + verdict approve": "/ui/?tier=vendor-official&verdict=approve",
        "search q=model-00 (any verdict)": "/ui/?q=model-00&verdict=any",
        "deep page (cursor at repo 5,000)": f"/ui/?after={names['cursor']}",
        "filtered: verdict reject, 200 rows": "/ui/?verdict=reject&limit=200",
    }


async def measure(settings: Settings, urls: dict[str, str], reps: int, warmup: int) -> dict[str, list[tuple[float,
                                                                                                        float]]]:
    app = create_app(settings, resolve=lambda repo, rev: sha_of(repo, rev))
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in urls}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for rep in range(warmup + reps):
                for name, url in urls.items():  # alternating: every case sees the same machine
                    wall, cpu = time.perf_counter(), time.process_time()
                    response = await client.get(url)
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                    if response.status_code != 200 or 'data-testid="approved-row"' not in response.text:
                        raise SystemExit(f"{url}: {response.status_code} without rows")
                    if rep >= warmup:
                        results[name].append((wall * 1000, cpu * 1000))
    return results


def lean_vs_whole(settings: Settings, reps: int) -> dict[str, list[float]]:
    """CPU ms of one 102-repo read (the home page's first batch) with lean and with whole newest reports."""
    store, policy = open_store(settings), active_policy(settings)
    cpu: dict[str, list[float]] = {"lean (reasons, identity.endpoint)": [], "whole documents": []}
    for _ in range(reps):
        for name, lean in zip(cpu, (policy.sha256, None), strict=True):  # alternating
            began = time.process_time()
            with store.session() as session:
                repo_page(session, OrgFilter(), after=None, offset=0, limit=102, lean_under=lean)
            cpu[name].append((time.process_time() - began) * 1000)
    store.close()
    return cpu


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--repos", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=100, help="timed requests per case")
    parser.add_argument("--warmup", type=int, default=5, help="untimed requests per case first")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(database_url=f"sqlite:///{Path(tmp) / 'bench.db'}", policy=Path("default"))
        began = time.perf_counter()
        names = fill(settings, args.repos)
        filled = time.perf_counter() - began
        results = asyncio.run(measure(settings, cases(names), args.reps, args.warmup))
        reads = lean_vs_whole(settings, args.reps)
    rows = []
    for name, samples in results.items():
        walls, cpus = [w for w, _ in samples], [c for _, c in samples]
        rows.append([name, f"{median(walls):.1f}", f"{percentile(walls, 0.9):.1f}", f"{median(cpus):.1f}",
                     f"{len(samples)}"])
    filtered = median([w for w, _ in results["filtered: org + deployable"]]) or 0.0
    lean_rows = [[name, f"{median(values):.2f}", f"{len(values)}"] for name, values in reads.items()]
    emit("\n".join([
        f"Home page over {args.repos:,} repos (store filled in {filled:.1f} s), in-process ASGI, "
        f"{args.reps} requests per case, cases alternating:",
        "",
        table(["page", "median wall ms", "p90 wall ms", "median CPU ms", "requests"], rows),
        "",
        "The store read behind the first page (102 repos with their newest reports), alternating:",
        "",
        table(["newest reports read as", "median CPU ms", "reads"], lean_rows),
        "",
        machine_info(["fastapi", "sqlalchemy", "jinja2"]),
        f"- date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        "",
        f"filtered page median {filtered:.1f} ms: target < {TARGET_MS:.0f} ms "
        + ("met" if filtered < TARGET_MS else "NOT met"),
    ]), args.out)


if __name__ == "__main__":
    main()
