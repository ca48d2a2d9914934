"""What every declaration reader shares: the ``Reading`` it returns, PEP 508 requirement strings
turned into ``Declared`` records, and line lookup for parsers that forget lines (tomllib).

Readers never raise on bad input: a file they cannot parse gives a ``Reading`` holding what was read
before the failure (often nothing) and ``error`` saying why. The caller decides whether to report it.
"""

from __future__ import annotations

import re

from app.core.scanners.text_rules.declared import Declared, DeclaredKind

MAX_DECLARATIONS = 2000  # per file: a generated lock-like file beyond this is read only so far
MAX_LINE_TEXT = 400  # characters of a line kept as evidence (the finding shortens it again)

# PEP 508 name, optional extras, then `@ URL` (a direct reference). The name rule is PEP 508's.
_DIRECT = re.compile(r"^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*@\s*(?P<url>\S+)")
_NAME = re.compile(r"^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
# pip's VCS schemes (pip/_internal/vcs): `git+https://`, `hg+ssh://`, ...; pip and uv also take scp-like git@host:path.
_VCS = re.compile(r"^(?:git|hg|svn|bzr)\+|^git@[\w.-]+:", re.I)
_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|git@[\w.-]+:)", re.I)


class Reading(list[Declared]):
    """The declarations a reader found, plus ``error`` when the file was not (wholly) readable."""

    def __init__(self, found: list[Declared] | None = None, error: str | None = None) -> None:
        super().__init__(found or [])
        self.error = error

    def add(self, declared: Declared | None) -> None:
        if declared is not None and len(self) < MAX_DECLARATIONS:
            self.append(declared)


def at(line: int) -> str:
    return f"line {line}"


def source_kind(url: str) -> DeclaredKind:
    """A VCS URL is kind git (cloned then built); any other URL is an archive or wheel (kind url)."""
    return "git" if _VCS.match(url) else "url"


def is_url(value: str) -> bool:
    return bool(_URL.match(value.strip()))


def requirement(spec: str, where: str, text: str, via: str) -> Declared | None:
    """One PEP 508 requirement string (or a bare URL, as pip and uv also accept).

    ``name @ URL`` is a direct reference: the installer fetches the URL whatever the name says,
    so the URL is the source (kind git or url). A plain name is kind package, its specifier kept
    and its environment markers dropped (``vllm>=0.9 ; sys_platform == 'linux'`` -> ``vllm>=0.9``).
    Local paths (``./pkg``, ``file:`` is a URL) and empty strings declare nothing fetched.
    """
    spec = spec.strip()
    direct = _DIRECT.match(spec)
    if direct:
        url = direct.group("url")
        return Declared(source_kind(url), url, where, text, via)
    if is_url(spec):
        url = spec.split()[0]
        return Declared(source_kind(url), url, where, text, via)
    if not _NAME.match(spec) or spec.startswith((".", "/", "~")):
        return None
    package = re.split(r"\s;|;", spec, maxsplit=1)[0].strip()
    if re.search(r"\.(?:whl|zip|tar\.gz|tgz|tar\.bz2)$", package, re.I) or "/" in package or "\\" in package:
        return None  # a local archive or directory: nothing fetched from an index
    return Declared("package", package, where, text, via)


def line_of(text: str, needle: str, start: int = 0) -> tuple[int, str]:
    """The (1-based number, text) of the first line from ``start`` containing ``needle``; for readers
    whose parser keeps no positions. Falls back to the first line when the needle is not there
    verbatim (TOML escapes, multi-line strings)."""
    index = text.find(needle, start) if needle else -1
    if index < 0:
        index = start if start < len(text) else 0
    number = text.count("\n", 0, index) + 1
    begin = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return number, text[begin: end if end >= 0 else len(text)][:MAX_LINE_TEXT]
