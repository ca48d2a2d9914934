"""The periodic pass re-vets approvals decided under a policy or scanners no longer in force."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.core.findings import Severity
from app.core.pipeline import vet
from app.core.report import Report
from app.core.verdict import Decision, PolicyRef, Verdict
from app.db.repository import save_report
from app.db.session import Store
from app.services.policies import active_policy
from app.services.revetting import stale_approvals
from app.settings import Settings
from tests.fakes import MemorySource, TextScanner

SHA = "0123456789abcdef0123456789abcdef01234567"
SCANNERS = {"text": "1"}


def stored(store: Store, repo: str, verdict: Verdict, policy_sha: str | None, scanners: dict[str, str],
           *, endpoint: str = "http://hub.test") -> None:
    base = vet(MemorySource({"README.md": b"fine"}, repo_id=repo, revision=SHA), [TextScanner(Severity.HIGH)])
    report: Report = replace(base, decision=Decision(verdict, (), PolicyRef("default", policy_sha)),
                             scanners=scanners, identity={"endpoint": endpoint} if endpoint else {})
    with store.session() as session:
        save_report(session, report, requested_revision="main", actor="test")


def test_approvals_from_another_policy_or_other_scanners_are_stale(store: Store) -> None:
    policy = active_policy(Settings(policy=Path("default")))
    stored(store, "acme/current", Verdict.APPROVE, policy.sha256, SCANNERS)
    stored(store, "acme/old-policy", Verdict.APPROVE, "0" * 64, SCANNERS)
    stored(store, "acme/old-scanner", Verdict.APPROVE, policy.sha256, {"text": "0"})
    stored(store, "acme/rejected", Verdict.REJECT, policy.sha256, {"text": "0"})  # nothing deployable to refresh
    stored(store, "acme/local", Verdict.APPROVE, "0" * 64, SCANNERS, endpoint="")  # `hfvet scan`: no hub to re-read
    assert sorted(stale_approvals(store, policy, SCANNERS)) == [("acme/old-policy", SHA), ("acme/old-scanner", SHA)]
