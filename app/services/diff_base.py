"""The revision diff's "against its base" view: a commit's files against its claimed base's approved commit.

The base commit is the one the vet compared with (recorded in the report's `lineage`); a report
from before lineage was kept is compared with the base's newest approved commit now. Files are
matched by path and compared by digest, as the revision diff does (app.services.diff).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.policy import LoadedPolicy
from app.core.provenance.lineage import claimed_base
from app.db.repository import reports_for
from app.db.session import Store
from app.services.diff import FileChange, file_changes
from app.services.lineage import StoreLineage, recorded_lineage


@dataclass(frozen=True)
class BaseDiff:
    repo: str
    sha: str
    claimed: str | None  # the card's base_model; None: it claims none
    base_sha: str | None  # the base commit compared with; None: no approved commit of the base is stored
    identical: list[str]
    changes: list[FileChange]  # "removed" here means: in the base, missing here

    def of_kind(self, kind: str) -> list[FileChange]:
        return [c for c in self.changes if c.kind == kind]


def base_diff(store: Store, policy: LoadedPolicy | None, repo: str, sha: str,
              document: dict[str, Any]) -> BaseDiff:
    """``repo`` at ``sha`` (its stored report ``document``) against its claimed base."""
    claimed = claimed_base(document.get("identity") or {})
    recorded = recorded_lineage(document)
    base_sha = recorded.base.sha if recorded is not None and recorded.base.claimed == claimed else None
    if claimed is None:
        return BaseDiff(repo, sha, None, None, [], [])
    if base_sha is None and policy is not None:
        found = StoreLineage(store, policy).approved_base(claimed)
        base_sha = found.sha if found else None
    base_files = _files_at(store, claimed, base_sha) if base_sha else None
    if base_files is None:
        return BaseDiff(repo, sha, claimed, None, [], [])
    mine = [f for f in document.get("files") or [] if isinstance(f, dict)]
    changes = file_changes(base_files, mine)
    changed = {c.path for c in changes}
    identical = sorted(f["path"] for f in mine if f.get("path") not in changed)
    return BaseDiff(repo, sha, claimed, base_sha, identical, changes)


def _files_at(store: Store, repo: str, sha: str) -> list[dict[str, Any]] | None:
    with store.session() as session:
        reports = [r for r in reports_for(session, repo) if r.sha == sha]
    if not reports:
        return None
    return [f for f in reports[-1].document.get("files") or [] if isinstance(f, dict)]
