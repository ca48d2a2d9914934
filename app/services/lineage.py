"""Lineage against the store: the lookups behind the policy's `lineage` facts (pure comparison: core/provenance).

A mirror is looked for among approved vendor-official commits that the content index says hold
some of the same bytes; a card's `base_model` is checked against that repo's newest approved
vetted commit. "Approved" is the gate's own rule under the active policy, reviews included
(app.services.references judges a pinned commit without asking the hub).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core import report_json
from app.core.findings import Finding
from app.core.manifest import Manifest
from app.core.policy import LoadedPolicy
from app.core.policy.identity import tier_of
from app.core.provenance.lineage import (
    TEMPLATE_RULE,
    BaseFact,
    CommitContent,
    ContentFile,
    Lineage,
    check_base,
    claimed_base,
    mirror_of,
    same_org,
)
from app.core.repo_refs import RepoReference
from app.core.report import FileReport
from app.db.content_index import commit_files, commits_holding
from app.db.repository import StoredReport, reports_for
from app.db.session import Store
from app.services.references import StoreJudge, store_only_judge

MAX_BASE_COMMITS = 20  # the base's newest vetted commits looked at for an approved one


class StoreLineage:
    """The `LineageJudge` a vet is handed (app.core.policy.facts): one per vet, under one policy."""

    def __init__(self, store: Store, policy: LoadedPolicy, judge: StoreJudge | None = None) -> None:
        self._store, self._policy = store, policy
        self._judge = judge or store_only_judge(store, policy)

    def __call__(self, manifest: Manifest, findings: Sequence[Finding], files: Sequence[FileReport]) -> Lineage:
        repo_id, sha = manifest.identity.repo_id or "", manifest.identity.revision or ""
        this = CommitContent(repo_id, sha, tuple(_content(f) for f in files), _templates(findings))
        mirror = mirror_of(this.files, self._vendor_candidates(this), repo=repo_id)
        claimed = claimed_base(manifest.identity.facts)
        if claimed is None or claimed.casefold() == repo_id.casefold():
            return Lineage(checked=True, mirror=mirror)
        base, new = check_base(this, claimed, self.approved_base(claimed))
        return Lineage(checked=True, mirror=mirror, base=base, new_files=new)

    def approved(self, repo: str, sha: str) -> bool:
        """Is ``repo`` at ``sha`` approved under the policy, as the gate answers for that exact commit?"""
        fact = self._judge.judge([RepoReference(repo, sha, "", "lineage")], (), 1)[0]
        return fact.approved

    def approved_base(self, repo: str) -> CommitContent | None:
        """``repo``'s newest vetted commit that is approved, with its files and templates; None if none is."""
        with self._store.session() as session:
            reports = reports_for(session, repo)
        newest: dict[str, StoredReport] = {}
        for report in sorted(reports, key=lambda r: (r.decided_at, r.id), reverse=True):
            newest.setdefault(report.sha, report)
        for sha, report in list(newest.items())[:MAX_BASE_COMMITS]:
            if self.approved(report.repo_id, sha):
                return content_of_document(report.repo_id, sha, report.document)
        return None

    def _vendor_candidates(self, this: CommitContent) -> list[CommitContent]:
        digests = [d for f in this.files for d in f.digests()]
        if not digests:
            return []
        with self._store.session() as session:
            org = this.repo.partition("/")[0] if this.repo else None
            holding = commits_holding(session, digests, outside_org=org)
            wanted = [(repo, sha) for repo, sha, matched in holding
                      if 2 * matched >= len(this.files) and self._vendor(repo) and not same_org(repo, this.repo)]
            found = [CommitContent(repo, sha, tuple(commit_files(session, repo, sha))) for repo, sha in wanted]
        return [c for c in found if self.approved(c.repo, c.sha)]

    def _vendor(self, repo: str) -> bool:
        return tier_of(repo.split("/", 1)[0], self._policy.model.tiers) == "vendor-official"


def _content(f: FileReport) -> ContentFile:
    return ContentFile(f.path, f.size, f.sha256, f.blob_id, f.layout)


def _templates(findings: Sequence[Finding]) -> frozenset[str]:
    return frozenset(f.evidence for f in findings if f.rule == TEMPLATE_RULE and f.evidence)


def content_of_document(repo: str, sha: str, document: Mapping[str, Any]) -> CommitContent:
    """A stored report's commit as the comparison reads it: files (with layouts) and chat-template digests."""
    report = report_json.load(document, f"{repo}@{sha}")
    return CommitContent(repo, sha, tuple(_content(f) for f in report.files), _templates(report.findings))


@dataclass(frozen=True)
class RecordedLineage:
    """A stored report's lineage as the dashboard shows it: the facts and their sentences."""

    lineage: Lineage
    lines: list[str]

    @property
    def base(self) -> BaseFact:
        return self.lineage.base


def recorded_lineage(document: Mapping[str, Any]) -> RecordedLineage | None:
    """The lineage a stored report recorded (None for reports vetted without a store, or before it was kept)."""
    raw = document.get("lineage")
    if not isinstance(raw, dict):
        return None
    lineage = Lineage.model_validate(raw)
    return RecordedLineage(lineage, lineage.summaries())
