"""What the endpoint tests look at besides the client: the server's metrics, its log, the pull rows of its
audit log, the blob cache folder, and a repo with a file large enough to arrive in several upstream chunks."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine, text

from app.db.pulls import PullDetail, parse_detail
from tests.integration.endpoint.conftest import APPROVED, Endpoint, Upstream

BIG = "nvidia/Big-Vocab"  # APPROVED's files and a 3.5 MiB vocab.txt: a git-blob-id file of four 1 MiB chunks
BIG_FILE = "vocab.txt"


def metric(ep: Endpoint, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples (with these labels) on the server's GET /metrics; 0 when absent."""
    body = httpx.get(f"{ep.url}/metrics", timeout=10).text
    return sum(sample.value for family in text_string_to_metric_families(body) for sample in family.samples
               if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()))


def server_log(ep: Endpoint) -> str:
    return ep.server.log.read_text(errors="replace")


@dataclass(frozen=True)
class PullRow:
    actor: str
    subject: str
    detail: PullDetail


def pull_rows(ep: Endpoint) -> list[PullRow]:
    """The audit log's `pull` rows, oldest first, read straight from the server's store."""
    engine = create_engine(ep.store_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT actor, subject, detail FROM audit_log WHERE action = 'pull' "
                                     "ORDER BY id")).all()
    finally:
        engine.dispose()
    out = []
    for actor, subject, detail in rows:
        parsed = parse_detail(detail)
        assert parsed is not None, detail
        out.append(PullRow(actor, subject, parsed))
    return out


def cached_blobs(root: Path) -> dict[str, int]:
    """Finished blobs of a blob cache folder by name (their content id), with their sizes."""
    return {p.name: p.stat().st_size for kind in ("sha256", "git-sha1") for p in (root / kind).glob("??/*")}


def cache_temp_files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "tmp").glob("*")) if (root / "tmp").exists() else []


def upstream_bytes(upstream: Upstream, repo: str, path: str) -> bytes:
    return (upstream.root / repo / path).read_bytes()


def add_big_repo(upstream: Upstream) -> str:
    """BIG in the upstream's folder (once per module's upstream); vet it with conftest's ``vet``."""
    folder = upstream.root / BIG
    if not folder.exists():
        shutil.copytree(upstream.root / APPROVED, folder)
        lines = (b"token-%07d\n" % i for i in range((7 << 19) // 14))
        (folder / BIG_FILE).write_bytes(b"".join(lines))
    return BIG
