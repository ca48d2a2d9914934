"""What every declaration reader shares: the ``Reading`` it returns, PEP 508 requirement strings
turned into ``Declared`` records, and line lookup for parsers that forget lines (tomllib).

Readers never raise on bad input: a file they cannot parse gives a ``Reading`` holding what was read
before the failure (often nothing) and ``error`` saying why. The caller decides whether to report it.
"""

from __future__ import annotations

import bisect
import re

from app.core.scanners.text_rules.declared import Declared, DeclaredKind

MAX_DECLARATIONS = 2000  # per file: a generated lock-like file beyond this is read only so far
MAX_MISSES = 64  # values sought in vain per file before lines fall back to the block's first
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

    @property
    def full(self) -> bool:
        return len(self) >= MAX_DECLARATIONS

    def add(self, declared: Declared | None) -> None:
        if declared is not None and not self.full:
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


class LineIndex:
    """Line numbers for readers whose parser keeps no positions (tomllib): the first line, from
    ``start``, holding the value verbatim, searched from the previous hit first (values come in
    file order), so a file of many values is read in about one pass."""

    def __init__(self, text: str, start: int = 0) -> None:
        self.text, self.start, self.last = text, start, start
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.misses = 0  # values not found verbatim: each costs a pass over the text, so few are sought

    def find(self, needle: str) -> tuple[int, str]:
        """(1-based number, text) of the line; the block's first line when the needle is not there
        verbatim (TOML escapes, multi-line strings)."""
        index = self.text.find(needle, self.last) if needle and self.misses < MAX_MISSES else -1
        if index < 0 and needle and self.misses < MAX_MISSES:
            index = self.text.find(needle, self.start)
        if index < 0:
            self.misses += 1
            index = self.start
        else:
            self.last = index
        number = bisect.bisect_right(self.starts, index)
        begin = self.starts[number - 1]
        end = self.text.find("\n", begin)
        return number, self.text[begin: end if end >= 0 else len(self.text)][:MAX_LINE_TEXT]
