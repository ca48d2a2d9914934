"""Issue 25's gate fan-out: a stored report whose config names 3,000 repos by branch, a hub that counts
the resolutions it is asked for, and `hfvet serve` processes over one store."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from app.core.pipeline import vet
from app.core.policy import load_policy, make_decide
from app.core.scanners.repo_refs_scanner import RepoReferenceScanner
from app.db.repository import save_report
from app.db.session import Store, upgrade
from app.settings import Settings
from tests.fakes import MemorySource
from tests.integration.api.live import LiveServer, server_env

REFERENCES = 3000
REPO = "nvidia/fanout-pipelines"  # vendor-official: its verdict depends on the pipelines' repos
SHA = "f" * 40
HUB_FACTS = {"endpoint": "http://127.0.0.1:9"}


def fanout_config(n: int = REFERENCES) -> bytes:
    """A config whose `custom_pipelines` name ``n`` other orgs' repos, none pinned (the default branch)."""
    pipelines = {f"task-{i}": {"impl": f"org{i}/pipe-{i}--pipeline.Pipe"} for i in range(n)}
    return json.dumps({"model_type": "bert", "custom_pipelines": pipelines}).encode()


def write_fanout_repo(root: Path, n: int = REFERENCES) -> None:
    """REPO on the fixture hub: the config and a card."""
    (root / REPO).mkdir(parents=True)
    (root / REPO / "config.json").write_bytes(fanout_config(n))
    (root / REPO / "README.md").write_text("pipelines\n")


class CountingHub:
    """The fixture hub app, counting the revision resolutions it answers (`/api/models/<repo>/revision/<rev>`),
    each held back ``delay`` seconds, so that an answer resolving thousands takes long enough to interrupt."""

    def __init__(self, inner: ASGIApp) -> None:
        self.inner = inner
        self.delay = 0.0
        self.resolutions = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path.startswith("/api/models/") and "/revision/" in path:
            self.resolutions += 1  # one event loop: no lock needed
            if self.delay:
                await asyncio.sleep(self.delay)
        await self.inner(scope, receive, send)


def store_fanout_report(store_url: str, n: int = REFERENCES) -> dict[str, object]:
    """A vet of REPO@SHA, as `hfvet vet` would have stored it (from the hub), naming ``n`` repos."""
    policy = load_policy(Settings().resolve_policy(Path("default")))
    source = MemorySource({"config.json": fanout_config(n), "README.md": b"pipelines"}, repo_id=REPO, revision=SHA,
                          facts=HUB_FACTS)
    report = vet(source, [RepoReferenceScanner()], decide=make_decide(policy))
    store = Store(store_url)
    try:
        with store.session() as session:
            save_report(session, report, requested_revision="main", actor="test")
    finally:
        store.close()
    return {"references": len(report.references), "rules": sorted({f.rule for f in report.findings})}


def prepared_store(home: Path, n: int = REFERENCES) -> Path:
    """A migrated SQLite store file holding the fan-out report (copy it: a vet of 3,000 takes seconds)."""
    path = home / f"store-{n}.db"
    upgrade(f"sqlite:///{path}")
    store_fanout_report(f"sqlite:///{path}", n)
    return path


def copy_store(template: Path, home: Path) -> str:
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template, home / "store.db")
    return f"sqlite:///{home / 'store.db'}"


@contextmanager
def serving(hub_url: str, store_url: str, home: Path, **env: str) -> Iterator[LiveServer]:
    """`hfvet serve` over ``store_url``, stopped when the block ends."""
    home.mkdir(parents=True, exist_ok=True)
    server = LiveServer(server_env(hub_url, store_url, home, **env), home / "serve.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()
