"""Classify one URL found in a model card or install file: upstream, fork, binary, or just a link."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from app.core.findings import Severity
from app.core.scanners.text_rules.upstreams import Project, Upstreams, host_in

# git clones ssh:// and git:// (and pip/uv take them as git+ssh://, git+git://) like https.
URL = re.compile(r"""(?:git\+)?(?:https?|ftp|ssh|git)://[^\s<>"'`)\]}|\\]+|git@[\w.-]+:[\w./-]+""", re.IGNORECASE)
_TRAILING = ".,;:!?*"
_BINARY = re.compile(
    r"\.(?:whl|so(?:\.\d+)*|dll|exe|run|appimage|dylib|msi|deb|rpm|pyd|apk|jar|dmg|pkg|scr|com|elf)$",
    re.IGNORECASE,
)
_ARCHIVE = re.compile(r"\.(?:zip|tar|tgz|tbz2?|txz|gz|xz|bz2|zst|7z|rar|bin)$", re.IGNORECASE)
CODE_HOSTS = frozenset({"github.com", "gitlab.com", "bitbucket.org", "gitee.com", "codeberg.org"})
_GITHUB_RAW = {"raw.githubusercontent.com", "codeload.github.com"}
_NOT_OWNERS = {
    "orgs", "features", "topics", "sponsors", "settings", "marketplace", "about", "login", "explore",
    "collections", "apps", "users", "enterprise", "pricing", "security", "site", "customer-stories",
    "notifications", "search", "trending", "readme", "join", "contact",
}
HF_HOSTS = frozenset({"huggingface.co", "hf.co"})
# Where GitHub serves release assets after the redirect: the owner is no longer in the URL.
RELEASE_ASSET_HOSTS = frozenset({"objects.githubusercontent.com", "release-assets.githubusercontent.com"})


@dataclass(frozen=True)
class Hit:
    rule: str
    severity: Severity
    message: str


@dataclass(frozen=True)
class CodeRef:
    """``owner/repo`` on a code host, and what part of it the URL points at."""

    host: str
    owner: str
    repo: str
    kind: str  # repo | release | archive | raw


def extract_urls(text: str) -> list[str]:
    return [m.group(0).rstrip(_TRAILING) for m in URL.finditer(text)]


def normalise(url: str) -> str:
    url = url.removeprefix("git+")
    if url.startswith("git@"):
        host, _, path = url[4:].partition(":")
        url = f"https://{host}/{path}"
    return url


def request_path(raw: str) -> str:
    """The path a client asks for: percent-decoded, dot segments removed as curl (and so git and
    pip) does, so ``github.com/NVIDIA/../someone/vllm`` is ``someone/vllm``."""
    path = unquote(raw)
    if not path:
        return path
    normal = posixpath.normpath(path)
    return "/" + normal.lstrip("/") if normal != "." else "/"


def code_ref(host: str, path: str) -> CodeRef | None:
    parts = [p for p in path.split("/") if p]
    host = host.lower().removeprefix("www.")
    if (host not in CODE_HOSTS and host not in _GITHUB_RAW) or len(parts) < 2:
        return None
    owner, repo = parts[0], parts[1].split("@")[0].removesuffix(".git")
    if owner.lower() in _NOT_OWNERS or not repo:
        return None
    rest = parts[2:4]
    kind = "repo"
    if rest == ["releases", "download"]:
        kind = "release"
    elif host == "codeload.github.com" or rest[:1] == ["archive"]:
        kind = "archive"
    elif host == "raw.githubusercontent.com" or rest[:1] in (["raw"], ["blob"]):
        kind = "raw"
    return CodeRef("github.com" if host in _GITHUB_RAW else host, owner, repo, kind)


def classify_url(url: str, context: str, up: Upstreams) -> Hit | None:
    """``context`` is "install" (pip/git clone), "download" (curl/wget) or "link" (prose)."""
    try:
        parts = urlsplit(normalise(url))
        host = (parts.hostname or "").lower()
    except ValueError:
        return Hit("external-link", Severity.INFO, "unparsable URL")
    path = request_path(parts.path)
    ref = code_ref(host, path)
    if host_in(host, up.redirect_hosts):
        return _redirect(host, context)
    official = _official(host, path, ref, up)
    if official:
        return Hit("upstream-link", Severity.INFO, f"official {official} link")
    name = posixpath.basename(path.split("@")[0])
    released = (ref is not None and ref.kind == "release") or host in RELEASE_ASSET_HOSTS
    binary = released or _BINARY.search(name) or (_ARCHIVE.search(name) and _fetched(host, ref, context, up))
    if binary and not (ref and ref.kind == "archive"):  # a repo's source archive is code, not a binary
        where = f"{ref.owner}/{ref.repo}" if ref else host
        return Hit("binary-download", Severity.HIGH, f"prebuilt binary/release asset {name} from {where}, "
                   "not from an official upstream")
    if ref:
        project = up.forked(ref.repo)
        if project:
            return Hit("forked-code", Severity.HIGH, f"{ref.owner}/{ref.repo} on {ref.host} looks like a fork "
                       f"of {project.key} (official: {_official_repos(project)}){_vendor_note(ref, up)}")
    if host_in(host, up.reference_hosts):
        return None
    if context == "install":
        return Hit("unknown-code-install", Severity.MEDIUM,
                   f"installs code from {_where(host, ref)}, which is not a known upstream")
    return Hit("external-link", Severity.INFO, f"link to {_where(host, ref)}")


def source_of(url: str) -> str | None:
    """Where the URL's code comes from, as the trust policy's `sources` globs read it:
    ``github.com/owner/repo`` on a code host, else ``host/path`` (no scheme, query or user)."""
    try:
        parts = urlsplit(normalise(url))
        host = (parts.hostname or "").lower()
    except ValueError:
        return None
    if not host:
        return None
    path = request_path(parts.path)
    ref = code_ref(host, path)
    if ref:
        return f"{ref.host}/{ref.owner}/{ref.repo}"
    return f"{host}{path.rstrip('/')}"[:200]


def download_source(url: str) -> str | None:
    """``host/path`` of a URL a command downloads and runs (no scheme, user, port, query or fragment),
    path decoded and normalised: the trust policy's `installers` globs match the script itself."""
    try:
        parts = urlsplit(normalise(url))
        host = (parts.hostname or "").lower()
    except ValueError:
        return None
    return f"{host}{request_path(parts.path).rstrip('/')}"[:300] if host else None


def _redirect(host: str, context: str) -> Hit:
    if context == "link":
        return Hit("external-link", Severity.INFO, f"short, redirecting or paste link to {host}")
    return Hit("redirect-url", Severity.HIGH, f"{host} does not say what it serves (shortener, redirect or "
               "paste): installing or downloading from it runs unknown code that can change after the vet")


def _vendor_note(ref: CodeRef, up: Upstreams) -> str:
    other = up.owner_of(ref.owner, ref.repo)
    return f"; {ref.owner} is official for {other.key}, not for this project" if other else ""


def official_source(url: str, up: Upstreams) -> bool:
    """Whether running what the URL serves is trusting an official upstream (not a third-party
    Hugging Face repo, which is a reference host for links but not a vetted code source)."""
    hit = classify_url(url, "link", up)
    if hit is None:
        try:
            return not host_in(urlsplit(normalise(url)).hostname or "", HF_HOSTS)
        except ValueError:
            return False
    return hit.rule == "upstream-link"


def _official(host: str, path: str, ref: CodeRef | None, up: Upstreams) -> str | None:
    if ref:
        if ref.host != "github.com":
            return None
        # Judged by owner: a repo named like a project is official only under that project's
        # owners (NVIDIA/vllm is NVIDIA's fork of vLLM, whatever NVIDIA's other repos are).
        named = up.named_by(ref.repo)
        owned = next((p for p in named if p.owns(ref.owner, ref.repo)), None)
        project = owned if named else up.owner_of(ref.owner, ref.repo)
        return project.key if project else None
    if host.endswith(".github.io") and up.official_owner(host.removesuffix(".github.io")):
        return host
    if host_in(host, HF_HOSTS):
        owner = next((p for p in path.split("/") if p), "")
        return f"{owner} (Hugging Face)" if owner and up.official_owner(owner) else None
    project = next((p for p in up.projects if host_in(host, p.hosts)), None)
    return project.key if project else None


def _fetched(host: str, ref: CodeRef | None, context: str, up: Upstreams) -> bool:
    """Archives count as binaries when downloaded or installed, not when merely linked (papers, data)."""
    return context != "link" and not host_in(host, up.reference_hosts)


def _official_repos(project: Project) -> str:
    return ", ".join(sorted(project.repos | {f"{o}/*" for o in project.owners}))


def _where(host: str, ref: CodeRef | None) -> str:
    return f"{ref.host}/{ref.owner}/{ref.repo}" if ref else host or "an unknown host"
