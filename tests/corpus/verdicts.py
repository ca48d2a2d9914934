"""Vet a case's folder once and let the policy decide its findings for each tier of publisher."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.core.findings import Finding
from app.core.manifest import Manifest
from app.core.pipeline import VetOptions, vet
from app.core.policy import LoadedPolicy, load_policy
from app.core.policy.engine import evaluate
from app.core.policy.facts import facts_from
from app.core.report import FileReport, Report
from app.core.scanners import all_scanners
from app.core.verdict import Decision
from app.settings import Settings
from app.sources.local import LocalSource

# The same bytes published by a vendor-official org and by anyone else (not a lookalike).
ORGS = {"vendor-official": "nvidia", "third-party": "some-user"}
# The repo id a case's own files use for the repo itself (a card's `from_pretrained("this/repo")`): the
# scan runs under it, so self-references are recognised as such; the tiers above rename it afterwards.
SELF = "this/repo"


def default_policy() -> LoadedPolicy:
    return load_policy(Settings().resolve_policy(Path("default")))


def decisions_by_tier(folder: Path, policy: LoadedPolicy, publisher: str | None = None) -> dict[str, Decision]:
    return vet_by_tier(folder, policy, publisher)[0]


def vet_by_tier(folder: Path, policy: LoadedPolicy, publisher: str | None = None) -> tuple[dict[str, Decision], Report]:
    """The decision for each tier, and the report (its findings say which rules fired). With a
    ``publisher`` (a case whose attack is who publishes it), every tier is decided under that repo id."""
    decisions: dict[str, Decision] = {}

    def decide(manifest: Manifest, findings: list[Finding], files: list[FileReport]) -> Decision:
        for tier, org in ORGS.items():
            repo_id = publisher or f"{org}/{folder.name}"
            named = replace(manifest, identity=replace(manifest.identity, repo_id=repo_id))
            decisions[tier] = evaluate(policy, facts_from(named, findings, files))
        return decisions["vendor-official"]

    report = vet(LocalSource(folder, repo_id=SELF), all_scanners(), decide=decide, options=VetOptions(workers=2))
    return decisions, report
