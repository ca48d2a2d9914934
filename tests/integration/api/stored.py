"""Reports written straight into a store, as vets would have left them (no hub needed)."""

from __future__ import annotations

from app.core.findings import Severity
from app.core.pipeline import vet
from app.core.policy import LoadedPolicy, load_policy, make_decide
from app.core.report import Report
from app.db.repository import save_report
from app.db.session import Store
from app.settings import Settings
from tests.fakes import MemorySource, TextScanner

HUB_FACTS = {"endpoint": "http://127.0.0.1:9"}


def policy(name: str) -> LoadedPolicy:
    settings = Settings()
    return load_policy(settings.resolve_policy(settings.policy.with_name(name)))


def report(repo: str, sha: str, text: bytes = b"fine", under: LoadedPolicy | None = None) -> Report:
    """A vet of a two-file repo; EVIL in the README is a critical finding. ``under=None``: the interim verdict."""
    # The hub endpoint in the identity is what a vet from the hub records (a local scan has none).
    source = MemorySource({"README.md": text, "config.json": b"{}"}, repo_id=repo, revision=sha, facts=HUB_FACTS)
    scanners = [TextScanner(Severity.CRITICAL)]
    return vet(source, scanners) if under is None else vet(source, scanners, decide=make_decide(under))


def save(store: Store, rep: Report, requested: str | None = "main", actor: str = "test") -> int:
    with store.session() as session:
        return save_report(session, rep, requested_revision=requested, actor=actor)


def no_hub(repo: str, revision: str) -> str:
    """The resolver of tests that ask only about exact commits: the hub is never needed."""
    raise AssertionError(f"an exact commit must not touch the hub ({repo}@{revision})")
