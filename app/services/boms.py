"""The CycloneDX ML-BOM of a vetted commit (`GET /bom/...`, `hfvet bom`, the dashboard's download).

It describes the newest stored report of the commit as recorded (its verdict, its policy), stamped
with that report's decided_at and a serial number derived from it: the same stored report gives the
same bytes. The policy's rules and the publisher's tier are included when the active policy is the
one that decided (same sha256); the gate's current answer, reviews included, stays `GET /gate`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC

from app import __version__
from app.core.policy import LoadedPolicy
from app.core.policy.identity import tier_of
from app.core.provenance.bom_context import BomContext, PolicyRule, stored_serial
from app.db.repository import StoredReport, reports_for
from app.db.reviews import newest_report
from app.db.session import Store
from app.errors import HfvetError
from app.services.commits import vetted_commit


class BomNotFound(HfvetError):
    """The commit was never vetted: there is nothing to describe (the API's 404 `commit-not-vetted`)."""


@dataclass(frozen=True)
class CommitBom:
    repo: str
    sha: str
    report_id: int
    document: str  # the CycloneDX 1.6 JSON, ending in a newline

    @property
    def filename(self) -> str:
        return f"{self.repo.replace('/', '--')}-{self.sha[:12]}.cdx.json"


def commit_bom(store: Store, policy: LoadedPolicy, repo: str, revision: str) -> CommitBom:
    """The BOM of ``repo`` at the commit ``revision`` names (its sha, or 7+ hex of it: NotACommit otherwise,
    AmbiguousCommit for a prefix several vetted commits share); BomNotFound when it was never vetted."""
    from app.core.provenance.bom import bom_json  # cyclonedx loads only when a BOM is asked for

    sha = vetted_commit(store, repo, revision)
    with store.session() as session:
        stored = newest_report(session, repo, sha)
    if stored is None:
        raise BomNotFound(f"{repo}@{sha} has never been vetted: vet it first (`hfvet vet {repo} --revision {sha}` "
                          f"or POST /vet?repo={repo}&revision={sha})")
    return CommitBom(repo, sha, stored.id, bom_json(stored.load(), context(stored, policy)))


def newest_commit(store: Store, policy: LoadedPolicy, repo: str) -> str | None:
    """The commit of ``repo`` decided last (the dashboard's first), or None when the repo was never vetted."""
    with store.session() as session:
        reports = reports_for(session, repo, lean_under=policy.sha256)
    newest = max(reports, key=lambda r: (r.decided_at.timestamp(), r.id), default=None)
    return None if newest is None else newest.sha


def context(stored: StoredReport, policy: LoadedPolicy) -> BomContext:
    decided = stored.decided_at  # aware: the store reads every time back in UTC (db.base.UTCDateTime)
    same = policy.sha256 == stored.policy_sha256  # its rules are the ones that decided
    rules = tuple(PolicyRule(r.id, r.description, r.when, r.decision) for r in policy.model.rules) if same else ()
    org = stored.repo_id.partition("/")[0]
    return BomContext(timestamp=decided.astimezone(UTC), serial=stored_serial(stored.repo_id, stored.sha, stored.id),
                      hfvet_version=__version__, report_id=stored.id,
                      tier=tier_of(org, policy.model.tiers) if same else None, rules=rules)
