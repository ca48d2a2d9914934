"""Official upstreams of runtimes (``data/upstreams.yaml``): who owns vllm, which hosts and images
are official, and which package names are near misses of a known one."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).parents[1] / "data" / "upstreams.yaml"
KNOWN_PACKAGES = Path(__file__).parents[1] / "data" / "known_packages.json"
_SEPARATORS = re.compile(r"[-_.]+")


class UpstreamsError(ValueError):
    """The upstreams data file is malformed."""


def tokens(name: str) -> tuple[str, ...]:
    name = name.lower().removesuffix(".git")
    return tuple(t for t in _SEPARATORS.split(name) if t)


def canonical_package(name: str) -> str:
    return "-".join(tokens(name))  # PEP 503 normalisation


def host_in(host: str, hosts: frozenset[str]) -> bool:
    host = host.lower().rstrip(".")
    return any(host == h or host.endswith("." + h) for h in hosts)


@dataclass(frozen=True)
class Project:
    key: str
    repos: frozenset[str]  # lowercase "owner/repo"
    owners: frozenset[str]  # lowercase owners whose every repo is official
    prefixes: tuple[tuple[str, ...], ...]  # name tokens a fork's repo name starts with
    anywhere: tuple[tuple[str, ...], ...]  # name tokens that mark a fork anywhere in the name
    exact: frozenset[str]  # whole repo names (joined tokens) that mark a fork
    globs: tuple[str, ...]  # "deepseek*": joined-name prefixes
    hosts: frozenset[str]
    images: tuple[str, ...]

    def owns(self, owner: str, repo: str) -> bool:
        return owner.lower() in self.owners or f"{owner}/{repo}".lower().removesuffix(".git") in self.repos

    def names_repo(self, repo: str) -> bool:
        parts = tokens(repo)
        joined = "".join(parts)
        return (
            any(parts[: len(p)] == p or joined == "".join(p) for p in self.prefixes)
            or any(_contains(parts, p) for p in self.anywhere)
            or joined in self.exact
            or any(joined.startswith(g) for g in self.globs)
        )


def _contains(parts: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    n = len(needle)
    return any(parts[i : i + n] == needle for i in range(len(parts) - n + 1))


class Upstreams:
    def __init__(self, data: dict[str, Any]) -> None:
        self.projects = tuple(_project(key, spec) for key, spec in _section(data, "projects", dict).items())
        self.reference_hosts = frozenset(_section(data, "reference_hosts", list))
        self.official_hosts = frozenset(h for p in self.projects for h in p.hosts)
        self.images = tuple(_section(data, "official_images", list)) + tuple(
            i for p in self.projects for i in p.images
        )
        self.packages = {
            canonical_package(n) for spec in data["projects"].values() for n in spec.get("packages", [])
        }
        self.legit = {canonical_package(n) for n in _section(data, "legit_near_names", list)}
        self.bad = {canonical_package(n) for n in _section(data, "known_bad_packages", list)}
        self.redirect_hosts = frozenset(str(h).lower() for h in _section(data, "redirect_hosts", list))
        self.conda_channels = frozenset(str(c).lower() for c in _section(data, "conda_channels", list))

    def owner_of(self, owner: str, repo: str) -> Project | None:
        return next((p for p in self.projects if p.owns(owner, repo)), None)

    def forked(self, repo: str) -> Project | None:
        return next((p for p in self.projects if p.names_repo(repo)), None)

    def named_by(self, repo: str) -> tuple[Project, ...]:
        """Every project whose names mark ``repo`` as one of its repos (or a fork of it)."""
        return tuple(p for p in self.projects if p.names_repo(repo))

    def official_owner(self, owner: str) -> bool:
        return any(owner.lower() in p.owners for p in self.projects)

    def official_image(self, image: str) -> bool:
        name = image.lower().split("@")[0]
        last = name.rsplit("/", 1)
        if ":" in last[-1]:
            name = name.rsplit(":", 1)[0]
        first = name.split("/")[0]
        if "." not in first and ":" not in first and first != "localhost":
            name = name if "/" in name else f"docker.io/library/{name}"
        name = re.sub(r"^(?:index\.)?docker\.io/(?!library/)", "", name)
        return any(name.startswith(e) if e.endswith("/") else name == e for e in self.images)

    def conda_channel_official(self, channel: str) -> bool:
        return channel.lower().strip("/").split("/")[0] in self.conda_channels

    def vouched(self, package: str) -> bool:
        """A known runtime's package, a listed real near-name, or among the most downloaded PyPI projects."""
        name = canonical_package(package)
        return name in self.packages or name in self.legit or name in well_known_packages()

    def typosquat_of(self, package: str) -> str | None:
        """The known package this name imitates, or None."""
        name = canonical_package(package)
        if name in self.bad:
            return name
        if len(name) < 4 or name in self.packages or name in self.legit:
            return None
        from rapidfuzz.distance import Levenshtein  # only for a package name outside the known lists

        for known in sorted(self.packages):
            limit = 1 if len(known) <= 5 else 2
            if abs(len(known) - len(name)) <= limit and Levenshtein.distance(name, known) <= limit:
                return known
        return None


@functools.cache
def well_known_packages() -> frozenset[str]:
    """The most downloaded PyPI projects (data/known_packages.json, scripts/derive_known_packages.py)."""
    try:
        data = json.loads(KNOWN_PACKAGES.read_text(encoding="utf-8"))
        return frozenset(canonical_package(str(n)) for n in data["packages"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UpstreamsError(f"{KNOWN_PACKAGES.name}: {exc}") from exc


def image_source(image: str) -> str:
    """``registry/path`` of an image without tag or digest, Docker Hub spelled out: the form the
    trust policy's `sources` globs match (``nvcr.io/nim/meta/llama-3.1-8b-instruct``)."""
    name = image.lower().split("@")[0]
    head, _, last = name.rpartition("/")
    name = f"{head}/{last.split(':')[0]}" if head else last.split(":")[0]
    first = name.split("/")[0]
    if "." in first or ":" in first or first == "localhost":
        return name.removeprefix("index.")
    return f"docker.io/{name}" if "/" in name else f"docker.io/library/{name}"


def _section(data: dict[str, Any], key: str, kind: type) -> Any:
    value = data.get(key)
    if not isinstance(value, kind):
        raise UpstreamsError(f"{DATA_FILE.name}: '{key}' must be a {kind.__name__}")
    return value


def _project(key: str, spec: Any) -> Project:
    if not isinstance(spec, dict) or not spec.get("github"):
        raise UpstreamsError(f"{DATA_FILE.name}: project {key!r} needs a 'github' list")
    github = [str(g) for g in spec["github"]]
    owners = {g.split("/")[0].lower() for g in github if g.endswith("/*")}
    repos = {g.lower() for g in github if not g.endswith("/*")}
    names = [str(n) for n in spec.get("names", [])]
    if not (names or spec.get("anywhere") or spec.get("exact")):
        names = [r.split("/")[1] for r in repos]
    return Project(
        key=key, repos=frozenset(repos), owners=frozenset(owners),
        prefixes=tuple(tokens(n) for n in names if not n.endswith("*")),
        anywhere=tuple(tokens(str(n)) for n in spec.get("anywhere", [])),
        exact=frozenset("".join(tokens(str(n))) for n in spec.get("exact", [])),
        globs=tuple("".join(tokens(n[:-1])) for n in names if n.endswith("*")),
        hosts=frozenset(str(h).lower() for h in spec.get("hosts", [])),
        images=tuple(str(i).lower() for i in spec.get("images", [])),
    )


@functools.cache
def load_upstreams(path: Path = DATA_FILE) -> Upstreams:
    import yaml  # on first use: most scans read no text that names a package or host

    with path.open(encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    if not isinstance(data, dict):
        raise UpstreamsError(f"{path.name}: top level must be a mapping")
    return Upstreams(data)
