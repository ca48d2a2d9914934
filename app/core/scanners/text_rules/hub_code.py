"""The Hub as a host of code: a repo's files installed or run are that repo's code, unvetted unless the
repo itself is vetted and approved. Links to the Hub are references; installs from it are not.

pip and uv take ``git+https://huggingface.co/org/name@rev`` (the Hub serves git) and archive URLs under
``/org/name/resolve/<rev>/file.tar.gz`` (an sdist runs its build backend on install).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from app.core.scanners.text_rules.url_rules import HF_HOSTS, normalise

# Hub paths that are pages, not repos (huggingface.co/docs/..., /spaces/... are judged apart).
_NOT_ORGS = frozenset({"docs", "api", "blog", "models", "papers", "learn", "join", "login", "settings", "pricing",
                       "organizations", "new", "tasks", "search", "collections", "changelog", "enterprise"})
_OTHER_KINDS = frozenset({"datasets", "spaces"})
_FILE_VIEWS = frozenset({"resolve", "blob", "raw", "tree"})


@dataclass(frozen=True)
class HubTarget:
    repo: str  # `org/name`, or `datasets/org/name` / `spaces/org/name`
    revision: str | None

    @property
    def model(self) -> bool:
        return not self.repo.startswith(tuple(f"{k}/" for k in _OTHER_KINDS))


def hub_target(url: str) -> HubTarget | None:
    """The Hub repo a URL's bytes come from, or None when it is not a Hub repo URL."""
    try:
        parts = urlsplit(normalise(url))
        host = (parts.hostname or "").lower().removeprefix("www.")
    except ValueError:
        return None
    if host not in HF_HOSTS:
        return None
    segments = [s for s in unquote(parts.path).split("/") if s]
    prefix = segments[:1] if segments[:1] and segments[0] in _OTHER_KINDS else []
    rest = segments[len(prefix):]
    if len(rest) < 2 or rest[0] in _NOT_ORGS:
        return None
    name, _, pinned = rest[1].partition("@")
    revision = rest[3] if len(rest) > 3 and rest[2] in _FILE_VIEWS else pinned or None
    return HubTarget("/".join([*prefix, rest[0], name.removesuffix(".git")]), revision)
