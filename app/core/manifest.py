"""What a repo holds at one revision: identity plus one entry per file."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class ManifestFile:
    path: str  # repo-relative, forward slashes
    size: int
    sha256: str | None = None  # LFS sha256 when the source knows it
    blob_id: str | None = None  # git blob id when the source knows it
    format: str = "unknown"  # filled by content sniffing, never by extension
    link: str | None = None  # the symlinks the source followed to reach the bytes, when any

    def with_format(self, fmt: str) -> ManifestFile:
        return replace(self, format=fmt)


@dataclass(frozen=True)
class RepoIdentity:
    """Who published the repo; the trust policy decides what that means."""

    repo_id: str | None
    revision: str | None = None  # 40-hex commit sha when known
    facts: dict[str, Any] = field(default_factory=dict)  # author, createdAt, tags, cardData...

    @property
    def org(self) -> str | None:
        if not self.repo_id or "/" not in self.repo_id:
            return None
        return self.repo_id.split("/", 1)[0]


@dataclass(frozen=True)
class Manifest:
    identity: RepoIdentity
    files: tuple[ManifestFile, ...]

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)
