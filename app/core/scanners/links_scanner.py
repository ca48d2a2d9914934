"""Links and install instructions in model cards, READMEs, scripts and requirements files.

Flags what a person following the card would run that the vet cannot cover: forks of known
runtimes, prebuilt binaries from personal releases, ``curl | sh``, unknown container images,
package indexes and typosquatted package names. Official upstream links are recorded as info.
"""

from __future__ import annotations

import hashlib
import html
import posixpath
import re
from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, ScanOutcome, Severity
from app.core.formats.detect import Format
from app.core.manifest import ManifestFile
from app.core.scanners.base import ScanContext
from app.core.scanners.text_rules import shell_rules as sh
from app.core.scanners.text_rules.text_lines import (
    Line,
    NotebookError,
    continuations_for,
    evidence,
    logical_lines,
    notebook_lines,
    read_views,
)
from app.core.scanners.text_rules.upstreams import (
    DATA_FILE,
    Upstreams,
    UpstreamsError,
    image_source,
    load_upstreams,
)
from app.core.scanners.text_rules.url_rules import (
    classify_url,
    download_source,
    extract_urls,
    official_source,
    source_of,
)

# Python too: URLs of kernels/binaries fetched by modelling code, and shell strings it runs.
_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt", ".sh", ".bash", ".zsh", ".ps1", ".psm1", ".bat",
             ".cmd", ".ipynb", ".cfg", ".toml", ".yaml", ".yml", ".dockerfile", ".mk", ".ini", ".py", ".pyw", ".conf")
_NAMES = ("readme", "dockerfile", "containerfile", "makefile", "install", "setup.py", "justfile", ".condarc")
_TOKENIZER_DATA = {"vocab.txt", "merges.txt", "vocab.json", "dict.txt", "spm.txt"}
_PROSE_SUFFIXES = (".md", ".markdown", ".mdx", ".rst")
# Plain text can sniff as "pickle" ("torch==2.7" parses as opcodes); reading it as text is harmless.
_FORMATS = frozenset({Format.TEXT, Format.UNKNOWN, Format.PICKLE})
_INSTALL = re.compile(r"\b(?:pip[\d.]*|uv\s+pip|uv\s+tool|pipx|conda|mamba|micromamba)\s+install\b|\buv\s+add\b"
                      r"|\bgit\s+(?:clone|submodule\s+add|fetch|pull)\b|@\s*git\+|\bgit\+|@\s*(?:https?|ssh|git)://"
                      r"|\bdependency_links\b|\b(?:ADD|COPY)\s+(?:--\S+\s+)*(?:https?|git)://")
_DOWNLOAD = re.compile(r"\b(?:curl|wget|aria2c|iwr|invoke-webrequest|start-bitstransfer|certutil|bitsadmin|"
                       r"urlretrieve|urlopen|requests\.get)\b", re.I)
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_INLINE_CODE = re.compile(r"`([^`]+)`")
MAX_LINK_FINDINGS = 50  # info-level external links per file; more are dropped
MAX_COMMAND_CHARS = 16 * 1024  # commands are parsed in this much of a line (bounds regex work)


class LinksScanner:
    name: ClassVar[str] = "links"
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo("upstream-link", Severity.INFO, "link to the official upstream of a known runtime/project"),
        RuleInfo("external-link", Severity.INFO, "link to a host that is not a known upstream"),
        RuleInfo("forked-code", Severity.HIGH, "a known runtime's name under another owner (a fork)"),
        RuleInfo("binary-download", Severity.HIGH,
                 "prebuilt wheel/.so/.exe/archive from a personal release or unknown host"),
        RuleInfo("download-and-execute", Severity.CRITICAL,
                 "curl|sh, iex(iwr), base64 -d|sh, download then chmod +x/run"),
        RuleInfo("official-install-script", Severity.LOW, "download-and-execute of an official installer"),
        RuleInfo("unknown-code-install", Severity.MEDIUM, "pip install / git clone of code from an unknown repo"),
        RuleInfo("untrusted-package-index", Severity.MEDIUM,
                 "pip/uv index, find-links, trusted-host or conda channel that is not official"),
        RuleInfo("untrusted-container-image", Severity.MEDIUM, "container image from an unknown namespace"),
        RuleInfo("redirect-url", Severity.HIGH,
                 "install or download from a shortener, redirect, paste or file-drop URL (unknown code)"),
        RuleInfo("typosquat-package", Severity.HIGH, "pip package name one or two edits from a known one"),
        RuleInfo("limit-exceeded", Severity.HIGH, "file larger than the text limit: only its start checked"),
        RuleInfo("scan-error", Severity.HIGH, "a notebook that is not valid JSON, or broken upstream data"),
    )

    def handles(self, file: ManifestFile) -> bool:
        base = posixpath.basename(file.path).lower()
        if file.format not in _FORMATS or base in _TOKENIZER_DATA:
            return False
        return base.endswith(_SUFFIXES) or base.startswith(_NAMES) or "requirements" in base

    def version(self) -> str:
        """Names the upstreams data by digest: changing it can change verdicts."""
        return f"1, upstreams {hashlib.sha256(DATA_FILE.read_bytes()).hexdigest()[:12]}"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        path = ctx.file.path
        sink = FindingSink(path, self.name)
        views, cut = read_views(ctx.blob, ctx.limits.max_text_bytes)
        if cut:
            sink.add("limit-exceeded", Severity.HIGH,
                     f"{ctx.blob.size} bytes: only the first {ctx.limits.max_text_bytes} were checked")
        try:
            upstreams = load_upstreams()
            # A notebook is JSON: read as UTF-8, wide text is no notebook at all, so one view.
            notebook = path.lower().endswith(".ipynb")
            line_views = [_lines(path, text) for text in (views[:1] if notebook else views)]
        except (NotebookError, UpstreamsError, OSError) as exc:
            return ScanOutcome.failed(self.name, path, str(exc), sink.findings)
        checker = _Checker(path, upstreams, sink)
        for lines in line_views:
            checker.check(lines)
        return ScanOutcome.scanned(self.name, path, sink.findings)


# Rules whose finding names no install source (a link, an upstream): the policy judges them by rule.
_NO_SOURCE = frozenset({"upstream-link", "external-link"})


def _readable(text: str) -> str:
    """The line as its reader sees it: HTML entities decoded (`&#x2F;` is "/" to a browser)."""
    return html.unescape(text) if "&" in text else text


def _lines(path: str, text: str) -> list[Line]:
    lower = path.lower()
    if lower.endswith(".ipynb"):
        return notebook_lines(text)
    prose = lower.endswith(_PROSE_SUFFIXES) or posixpath.basename(lower).startswith("readme")
    return logical_lines(text, continuations=continuations_for(lower), code=not prose)


class _Checker:
    def __init__(self, path: str, upstreams: Upstreams, sink: FindingSink) -> None:
        base = posixpath.basename(path).lower()
        self.path, self.up, self.sink = path, upstreams, sink
        self.requirements = "requirements" in base and base.endswith((".txt", ".in"))
        self.dockerfile = base.startswith(("dockerfile", "containerfile")) or base.endswith(".dockerfile")
        self.tracker = sh.DownloadTracker()
        self.variables = sh.Variables()
        self.settings = sh.IndexSettings()
        self.condarc = sh.CondarcChannels() if base == ".condarc" else None
        self.stages: set[str] = set()
        self.seen: set[tuple[str, str]] = set()
        self.links = 0

    def check(self, lines: list[Line]) -> None:
        """One view of the file; a finding already made from another view is not repeated."""
        self.tracker, self.variables, self.stages = sh.DownloadTracker(), sh.Variables(), set()
        self.settings = sh.IndexSettings()
        self.condarc = sh.CondarcChannels() if self.condarc else None
        fenced = False
        for line in lines:
            if not line.code and _FENCE.match(line.text):
                fenced = not fenced
                continue
            text = _readable(self.variables.resolve(line.text[:MAX_COMMAND_CHARS]))
            commands = text if line.code or fenced else " ; ".join(_INLINE_CODE.findall(text))
            self._line(line, text, commands)

    def add(self, rule: str, severity: Severity, message: str, key: str, where: str, text: str,
            source: str | None = None) -> None:
        if (rule, key) in self.seen:
            return
        self.seen.add((rule, key))
        if rule == "external-link":
            self.links += 1
            if self.links > MAX_LINK_FINDINGS:
                return
        self.sink.add(rule, severity, message, evidence=evidence(self.path, where, text), source=source)

    def _line(self, line: Line, text: str, commands: str) -> None:
        urls = extract_urls(text)
        pip_runs = [sh.split_args(commands)] if self.requirements else sh.pip_arguments(commands)
        flagged = {index for args in pip_runs for index in self._pip(line, args)}
        flagged |= self._conda(line, self.condarc.feed(text) if self.condarc else sh.conda_channels(commands))
        flagged |= set(self._indexes(line, self.settings.feed(text)))
        context = self._context(text)
        for url in urls:
            hit = None if url in flagged else classify_url(url, context, self.up)
            if hit:
                self.add(hit.rule, hit.severity, f"{hit.message}: {url[:200]}", url, line.where, line.text,
                         source=None if hit.rule in _NO_SOURCE else source_of(url))
        self._download_execute(line.where, text, urls)
        for image in sh.docker_images(text, self.stages, strict_from=not self.dockerfile):
            if not self.up.official_image(image):
                self.add("untrusted-container-image", Severity.MEDIUM,
                         f"container image {image} is not from an official namespace", image,
                         line.where, line.text, source=image_source(image))

    def _indexes(self, line: Line, indexes: list[str]) -> list[str]:
        """Report package indexes that are not official; returns them."""
        untrusted = [i for i in indexes if "://" not in i or not self._official(i)]
        for index in untrusted:
            self.add("untrusted-package-index", Severity.MEDIUM,
                     f"pip index/find-links/trusted-host {index[:120]} is not an official package source",
                     index, line.where, line.text, source=source_of(index) if "://" in index else index[:200])
        return untrusted

    def _conda(self, line: Line, channels: list[str]) -> set[str]:
        """Report conda channels that are not official; returns channel URLs already reported."""
        reported: set[str] = set()
        for channel in channels:
            url = "://" in channel
            if (url and self._official(channel)) or (not url and self.up.conda_channel_official(channel)):
                continue
            source = source_of(channel) if url else f"anaconda.org/{channel.strip('/')}"
            self.add("untrusted-package-index", Severity.MEDIUM,
                     f"conda channel {channel[:120]} is not an official channel", channel, line.where, line.text,
                     source=source)
            reported.add(channel)
        return reported

    def _context(self, text: str) -> str:
        if self.requirements or _INSTALL.search(text):
            return "install"
        return "download" if _DOWNLOAD.search(text) or self.dockerfile else "link"

    def _official(self, url: str) -> bool:
        return official_source(url, self.up)

    def _download_execute(self, where: str, text: str, urls: list[str]) -> None:
        why = sh.download_and_execute(text)
        if why:
            self._report_execute(why, urls, where, text, key=text)
        for fetched_at, url, _run in self.tracker.feed(where, text, urls):
            why = f"downloads {url[:120]} (line {fetched_at}) then runs it"
            self._report_execute(why, [url], where, text, key=url)  # once per downloaded file

    def _report_execute(self, why: str, urls: list[str], where: str, text: str, key: str) -> None:
        # One URL: the script run is known, and the policy's `installers` may vouch for it. Several: not.
        source = download_source(urls[0]) if len(urls) == 1 else None
        if urls and all(self._official(u) for u in urls):
            self.add("official-install-script", Severity.LOW, f"{why} (official source)", key, where, text,
                     source=source)
        else:
            self.add("download-and-execute", Severity.CRITICAL, why, key, where, text, source=source)

    def _pip(self, line: Line, args: list[str]) -> list[str]:
        """Report pip's package sources and names; returns the index URLs flagged as untrusted."""
        targets, indexes = sh.pip_targets(args)
        untrusted = self._indexes(line, indexes)
        for spec in targets:
            name = sh.package_name(spec)
            squatted = self.up.typosquat_of(name) if name else None
            if name and squatted:
                self.add("typosquat-package", Severity.HIGH,
                         f"pip package {name!r} looks like a typosquat of {squatted!r}", name,
                         line.where, line.text)
        return untrusted
