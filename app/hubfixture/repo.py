"""Fixture repos on disk: finding them, their revisions, and resolving a revision to a snapshot.

Layout (docs/fixture-hub.md)::

    ROOT/<org>/<name>/                       main's files
    ROOT/<org>/<name>/.hub.json              repo metadata, refs, tokens, declared sha256
    ROOT/<org>/<name>/.revisions/<dir>/      full file tree of another revision (+ its own .hub.json)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from app.core.ids import is_commit
from app.hubfixture.hashing import HashCache
from app.hubfixture.meta import RepoMeta, load_repo_meta, load_snapshot_meta
from app.hubfixture.snapshot import Snapshot, build_snapshot

MAIN = "main"
_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class Refs:
    branches: dict[str, Snapshot]
    tags: dict[str, Snapshot]
    pull_requests: dict[str, Snapshot]  # "1" -> refs/pr/1


class Repo:
    def __init__(self, repo_id: str, folder: Path, hashes: HashCache) -> None:
        self.repo_id = repo_id
        self.folder = folder
        self._hashes = hashes
        self.meta: RepoMeta = load_repo_meta(folder)

    def snapshot(self, name: str) -> Snapshot:
        if name == MAIN:
            return build_snapshot(MAIN, self.folder, self.meta.snapshot, self._hashes)
        folder = self._revision_dirs()[name]
        return build_snapshot(name, folder, load_snapshot_meta(folder), self._hashes)

    def ref_targets(self) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
        """(branches, tags, pull requests) as ref name -> snapshot name, dangling refs dropped."""
        known = {MAIN, *self._revision_dirs()}
        branches = {n: n for n in known} | self.meta.branches | {MAIN: MAIN}

        def live(table: dict[str, str]) -> dict[str, str]:
            return {ref: target for ref, target in table.items() if target in known}

        return live(branches), live(self.meta.tags), live(self.meta.pull_requests)

    def refs(self) -> Refs:
        branches, tags, prs = self.ref_targets()
        loaded = {name: self.snapshot(name) for name in {*branches.values(), *tags.values(), *prs.values()}}
        return Refs(
            branches={ref: loaded[n] for ref, n in branches.items()},
            tags={ref: loaded[n] for ref, n in tags.items()},
            pull_requests={ref: loaded[n] for ref, n in prs.items()},
        )

    def resolve(self, revision: str) -> Snapshot | None:
        """Branch, tag, ``refs/heads|tags|pr/...`` or full commit sha -> snapshot; None if unknown."""
        name = self._target(revision)
        if name is not None:
            return self.snapshot(name)
        return self.by_commit(revision) if is_commit(revision) else None

    def _target(self, revision: str) -> str | None:
        branches, tags, prs = self.ref_targets()
        for prefix, table in (("refs/heads/", branches), ("refs/tags/", tags), ("refs/pr/", prs)):
            if revision.startswith(prefix):
                return table.get(revision[len(prefix) :])
        return branches.get(revision) or tags.get(revision)

    def by_commit(self, sha: str) -> Snapshot | None:
        for name in [MAIN, *self._revision_dirs()]:
            snap = self.snapshot(name)
            if snap.commit == sha:
                return snap
        return None

    def history(self, head: Snapshot) -> list[Snapshot]:
        """Newest first, following ``commit.parent``; stops on unknown parents and cycles."""
        chain, seen = [head], {head.name}
        known = {MAIN, *self._revision_dirs()}
        parent = head.meta.commit.parent
        while parent is not None and parent not in seen and parent in known:
            seen.add(parent)
            chain.append(self.snapshot(parent))
            parent = chain[-1].meta.commit.parent
        return chain

    def _revision_dirs(self) -> dict[str, Path]:
        # Listed from disk, never joined from request input: no path traversal.
        base = self.folder / ".revisions"
        if not base.is_dir():
            return {}
        return {p.name: p for p in sorted(base.iterdir()) if p.is_dir() and p.name != MAIN}


class RepoStore:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.hashes = HashCache()

    def find(self, org: str, name: str) -> Repo | None:
        if not (_SEGMENT.fullmatch(org) and _SEGMENT.fullmatch(name)) or ".." in (org + name):
            return None
        folder = self.root / org / name
        if not folder.is_dir():
            return None
        return Repo(f"{org}/{name}", folder, self.hashes)
