"""What a handler needs from a request, and who may see what of a repo."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from urllib.parse import urlencode

from starlette.datastructures import URL, Headers, QueryParams

from app.hubfixture import errors
from app.hubfixture.repo import Repo, RepoStore
from app.hubfixture.snapshot import Snapshot


class Level(IntEnum):
    INFO = 0  # model info, refs, commits: visible for gated repos
    LISTING = 1  # tree, paths-info: also refused for disabled repos
    CONTENT = 2  # file bytes: also refused for gated repos without an accepted token


@dataclass(frozen=True)
class Call:
    method: str
    segments: list[str]  # percent-decoded after splitting the raw path on "/"
    raw_path: str
    query: QueryParams
    headers: Headers
    body: bytes
    url: URL
    store: RepoStore
    tokens: frozenset[str]  # accepted by every repo (app-wide)
    page_size: int

    @property
    def token(self) -> str | None:
        auth = self.headers.get("authorization", "")
        scheme, _, value = auth.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            return None
        return value.strip()

    def flag(self, name: str) -> bool:
        return self.query.get(name, "").lower() in ("1", "true")

    def link_with(self, **params: str | int) -> str:
        """Absolute URL of this endpoint with new query params (the client follows it verbatim)."""
        query = [(k, v) for k, v in self.query.multi_items() if k not in params]
        query += [(k, str(v)) for k, v in params.items()]
        return str(self.url.replace(path=self.raw_path, query=urlencode(query)))


def open_repo(call: Call, org: str, name: str, level: Level) -> Repo:
    repo = call.store.find(org, name)
    if repo is None:
        raise errors.repo_not_found(f"{org}/{name}", call.token is not None)
    token = call.token
    accepted = token is not None and token in (repo.meta.tokens | call.tokens)
    if repo.meta.private and not accepted:
        raise errors.repo_not_found(repo.repo_id, token is not None)
    if level >= Level.LISTING and repo.meta.disabled:
        raise errors.disabled()
    if level >= Level.CONTENT and repo.meta.gated and not accepted:
        raise errors.gated(repo.repo_id, token is not None)
    return repo


def resolve(repo: Repo, revision: str) -> Snapshot:
    snap = repo.resolve(revision)
    if snap is None:
        raise errors.revision_not_found(revision)
    return snap
