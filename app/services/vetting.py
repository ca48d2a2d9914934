"""Glue between the pure core and the outside: pick a source, scanners and a decision."""

from __future__ import annotations

from pathlib import Path

from app.cli.progress import vet_progress
from app.core.limits import Limits
from app.core.pipeline import default_decide, vet
from app.core.policy.engine import make_decide
from app.core.policy.errors import PolicyError
from app.core.policy.loader import load_policy
from app.core.ports import DecideFn, Source
from app.core.report import Report
from app.core.scanners import all_scanners
from app.errors import UsageError
from app.settings import resolve_policy
from app.sources.local import LocalSource


def decide_for(policy_path: Path | None) -> DecideFn:
    """The trust policy's decision, or the interim severity verdict without one."""
    if policy_path is None:
        return default_decide
    try:
        return make_decide(load_policy(resolve_policy(policy_path)))
    except PolicyError as exc:
        raise UsageError(str(exc)) from exc


def scan_local(
    path: Path,
    *,
    repo_id: str | None = None,
    policy_path: Path | None = None,
    limits: Limits | None = None,
    show_progress: bool | None = None,
) -> Report:
    """Vet a downloaded snapshot directory or a single file."""
    if not path.exists():
        raise UsageError(f"no such file or directory: {path}")
    decide = decide_for(policy_path)
    source = LocalSource(path, repo_id=repo_id)
    return _run(source, repo_id or path.name, decide, limits, show_progress, workers=4)


def vet_remote(
    repo_id: str,
    *,
    revision: str = "main",
    policy_path: Path | None = None,
    endpoint: str | None = None,
    token: str | None = None,
    limits: Limits | None = None,
    show_progress: bool | None = None,
    workers: int = 8,
) -> Report:
    """Vet a repo on a hub (the real one, a mirror, or the fixture hub) at a pinned commit."""
    from app.sources.hub import HubSource  # the network client is only needed here

    decide = decide_for(policy_path)  # a bad policy fails before any hub traffic
    source = HubSource(repo_id, revision, endpoint=endpoint, token=token)
    return _run(source, repo_id, decide, limits, show_progress, workers)


def _run(
    source: Source, label: str, decide: DecideFn, limits: Limits | None, show_progress: bool | None, workers: int
) -> Report:
    total = len(source.manifest().files)
    with vet_progress(total, label, enabled=show_progress) as progress:
        return vet(source, all_scanners(), limits=limits, decide=decide, progress=progress, workers=workers)
