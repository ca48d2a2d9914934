"""The content index: which vetted repo@commit holds a file with given bytes (table `content_index`).

One row per file and digest of every stored commit's manifest, written with the commit's first
report (save_report) and never again: a commit's files do not change however often it is re-vetted.
Stores from before the index were filled by migration 0009's data step.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.manifest_json import StoredFile
from app.core.provenance.lineage import ContentFile
from app.db.models import ContentRow

MAX_DIGESTS = 500  # digests per IN (...) query: well under every backend's bound-parameter limit


def index_commit(session: Session, repo_id: str, sha: str, files: Iterable[StoredFile]) -> int:
    """Index ``repo_id`` at ``sha`` unless it already is; returns the rows added (0 for a re-vet)."""
    if session.execute(select(ContentRow.id).where(ContentRow.repo_id == repo_id, ContentRow.sha == sha)
                       .limit(1)).first() is not None:
        return 0
    rows = [ContentRow(digest=digest, repo_id=repo_id, sha=sha, path=f.path, size=f.size)
            for f in files for digest in _digests(f)]
    session.add_all(rows)
    session.flush()
    return len(rows)


def _digests(f: StoredFile) -> tuple[str, ...]:
    return ContentFile(f.path, f.size, f.sha256, f.blob_id).digests()


def commits_holding(session: Session, digests: Sequence[str], *, outside_org: str | None = None,
                    limit: int = 20) -> list[tuple[str, str, int]]:
    """The commits holding any of ``digests``, as (repo id, sha, files matched), most matches first.

    ``outside_org``: the repos of this org are left out in the query itself (a repo is trivially identical to
    itself, and an org's own repos share bytes: left to the ranking, they could fill all ``limit`` places)."""
    counts: dict[tuple[str, str], set[str]] = {}
    wanted = sorted(set(digests))
    for start in range(0, len(wanted), MAX_DIGESTS):
        query = select(ContentRow.repo_id, ContentRow.sha, ContentRow.path).where(
            ContentRow.digest.in_(wanted[start:start + MAX_DIGESTS]))
        if outside_org is not None:
            query = query.where(~func.lower(ContentRow.repo_id).startswith(f"{outside_org.lower()}/", autoescape=True))
        for repo_id, sha, path in session.execute(query):
            counts.setdefault((repo_id, sha), set()).add(path)
    ranked = sorted(counts.items(), key=lambda item: (-len(item[1]), item[0]))
    return [(repo_id, sha, len(paths)) for (repo_id, sha), paths in ranked[:limit]]


def commit_files(session: Session, repo_id: str, sha: str) -> list[ContentFile]:
    """The indexed files of ``repo_id`` at ``sha``, by path (empty when it is not indexed)."""
    query = (select(ContentRow.path, ContentRow.size, ContentRow.digest)
             .where(ContentRow.repo_id == repo_id, ContentRow.sha == sha).order_by(ContentRow.path))
    found: dict[str, ContentFile] = {}
    for path, size, digest in session.execute(query):
        entry = found.get(path) or ContentFile(path, size)
        kind, _, value = digest.partition(":")
        found[path] = (ContentFile(path, size, value, entry.blob_id) if kind == "sha256"
                       else ContentFile(path, size, entry.sha256, value))
    return list(found.values())


def indexed_rows(session: Session, repo_id: str | None = None) -> int:
    """How many rows the index holds (of ``repo_id``, when given)."""
    query = select(func.count(ContentRow.id))
    if repo_id is not None:
        query = query.where(ContentRow.repo_id == repo_id)
    return int(session.execute(query).scalar_one())
