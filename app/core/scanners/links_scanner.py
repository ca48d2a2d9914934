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

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.detect import Format
from app.core.manifest import ManifestFile
from app.core.repo_refs import REFERENCE_RULE, RepoReference
from app.core.scanners.base import ScanContext
from app.core.scanners.text_rules import shell_rules as sh
from app.core.scanners.text_rules.declarations import read_declarations, requirements
from app.core.scanners.text_rules.hub_code import hub_target
from app.core.scanners.text_rules.judge import NO_SOURCE, judge, package_judgement
from app.core.scanners.text_rules.shell.flow import Flow
from app.core.scanners.text_rules.shell.programs import programs
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
    KNOWN_PACKAGES,
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
             ".cmd", ".ipynb", ".cfg", ".toml", ".yaml", ".yml", ".dockerfile", ".mk", ".ini", ".py", ".pyw", ".conf",
             ".sbatch", ".slurm", ".pbs", ".ksh", ".envrc", ".containerfile", ".in", ".pip", ".def", ".gitmodules")
_NAMES = ("readme", "dockerfile", "containerfile", "makefile", "install", "setup.py", "justfile", ".condarc",
          "singularity", "apptainer")
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
_EXTRA_INDEX = re.compile(r"extra[-_]index[-_]url", re.I)
_UV = re.compile(r"\buv\s+(?:pip|add|tool|run)\b|\buvx\b")
_INLINE_CODE = re.compile(r"`([^`]+)`")
MAX_LINK_FINDINGS = 50  # info-level external links per file; more are dropped
MAX_COMMAND_CHARS = 16 * 1024  # commands are parsed in this much of a line (bounds regex work)


class LinksScanner:
    name: ClassVar[str] = "links"
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo("upstream-link", Severity.INFO, "link to the official upstream of a known runtime/project",
                 kind=RuleKind.REFERENCE),
        RuleInfo("external-link", Severity.INFO, "link to a host that is not a known upstream",
                 kind=RuleKind.REFERENCE),
        RuleInfo("forked-code", Severity.HIGH, "a known runtime's name under another owner (a fork)",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo("binary-download", Severity.HIGH,
                 "prebuilt wheel/.so/.exe/archive from a personal release or unknown host",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo("download-and-execute", Severity.CRITICAL,
                 "curl|sh, iex(iwr), base64 -d|sh, download then chmod +x/run", kind=RuleKind.EXECUTION),
        RuleInfo("official-install-script", Severity.LOW, "download-and-execute of an official installer",
                 kind=RuleKind.INSTALL),
        RuleInfo("unknown-code-install", Severity.MEDIUM, "pip install / git clone of code from an unknown repo",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo("untrusted-package-index", Severity.MEDIUM,
                 "pip/uv index, find-links, trusted-host or conda channel that is not official",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo("untrusted-container-image", Severity.MEDIUM, "container image from an unknown namespace",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo("redirect-url", Severity.HIGH,
                 "install or download from a shortener, redirect, paste or file-drop URL (unknown code)",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo("typosquat-package", Severity.HIGH, "pip package name one or two edits from a known one",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo("unknown-package", Severity.MEDIUM,
                 "pip/uv package that is no known runtime's and not among the most downloaded PyPI projects: "
                 "nobody vouches for it (a name registered yesterday is not in a ranking of months)",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo("dependency-confusion", Severity.HIGH,
                 "pip package nobody vouches for, installed with an extra index beside PyPI: pip takes the "
                 "highest version from either, so whoever registers the name on PyPI wins",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo(REFERENCE_RULE, Severity.INFO,
                 "a Hub repo whose code the instructions install or run (`pip install git+https://huggingface.co/...`, "
                 "`hf download` then `pip install`): judged as that repo's code (the report's references)",
                 kind=RuleKind.REFERENCE),
        RuleInfo.limit("file larger than the text limit: only its start checked"),
        RuleInfo.scan_error("a notebook that is not valid JSON, or broken upstream data"),
    )

    def handles(self, file: ManifestFile) -> bool:
        base = posixpath.basename(file.path).lower()
        if file.format not in _FORMATS or base in _TOKENIZER_DATA:
            return False
        # An extensionless file (`install`, `run`) may be a script: read as one if its text says so.
        return base.endswith(_SUFFIXES) or base.startswith(_NAMES) or "requirements" in base or "." not in base

    def version(self) -> str:
        """Names the upstreams data by digest: changing it can change verdicts."""
        data = DATA_FILE.read_bytes() + KNOWN_PACKAGES.read_bytes()
        return f"3, upstreams {hashlib.sha256(data).hexdigest()[:12]}"

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
        checker = _Checker(path, upstreams, sink, ctx.identity.repo_id)
        for text, lines in zip(views, line_views, strict=False):
            checker.programs(text)
            checker.check(lines)
            checker.declarations(text)
        return ScanOutcome.scanned(self.name, path, sink.findings)


_NO_SOURCE = NO_SOURCE  # rules whose finding names no install source: the policy judges them by rule


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
    def __init__(self, path: str, upstreams: Upstreams, sink: FindingSink, own_repo: str | None = None) -> None:
        base = posixpath.basename(path).lower()
        self.path, self.up, self.sink, self.own_repo = path, upstreams, sink, own_repo
        self.extra_index = False  # an extra index beside PyPI was set earlier in the file (pip merges them)
        self.parsed: set[str] = set()  # lines the shell parser read: its verdict on them replaces the idioms
        self.requirements = "requirements" in base and base.endswith((".txt", ".in"))
        self.dockerfile = base.startswith(("dockerfile", "containerfile")) or base.endswith(".dockerfile")
        self.tracker = sh.DownloadTracker()
        self.variables = sh.Variables()
        self.settings = sh.IndexSettings()
        self.condarc = sh.CondarcChannels() if base == ".condarc" else None
        self.stages: set[str] = set()
        self.seen: set[tuple[str, str]] = set()
        self.links = 0

    def programs(self, text: str) -> None:
        """The file's shell programs, parsed and followed from download to execution (text_rules/shell)."""
        flow = Flow()
        for first_row, script in programs(self.path, text):
            flow.run_script(script, first_row)
            self.parsed |= {str(first_row + k + 1) for k, row in enumerate(script.split("\n")) if row.strip()}
        if flow.truncated:
            self.add("limit-exceeded", Severity.HIGH, "shell nested or long beyond the parser's bounds: the rest of "
                     "its programs was not followed", "shell-bounds", "1", "")
        rows = text.splitlines()

        def quoted(row: int) -> str:
            return rows[row] if 0 <= row < len(rows) else ""
        for run in flow.executions:
            where = str(run.row + 1)
            fetched = "a URL the text does not show" if run.url == "?" else run.url[:120]
            self._report_execute(f"downloads {fetched} (line {run.fetched_row + 1}); {run.why}",
                                 [] if run.url == "?" else list(run.urls), where, quoted(run.row), key=run.url)
        for code in flow.hub:
            self._hub_reference(code.repo, code.revision, code.how, str(code.row + 1), quoted(code.row))

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

    def declarations(self, text: str) -> None:
        """Sources the file declares in its own format (pyproject, requirements, conda, Helm,
        launchers...), judged by ``judge``; one a line check already reported is not repeated."""
        found = read_declarations(self.path, text)
        if found.error:
            # Fail closed: what the installer reads and hfvet could not is unvetted (review, never silence).
            self.add("scan-error", Severity.HIGH, f"declarations not read: {found.error}", "declarations",
                     "1", found.error)
        extra = self.extra_index or any(d.kind == "index" and d.extra for d in found)
        for declared in found:
            where = declared.where.removeprefix("line ")
            hub = hub_target(declared.value) if declared.kind in ("git", "url") else None
            if hub:
                self._hub_reference(hub.repo, hub.revision, declared.via, where, declared.text)
                continue
            for hit in judge(declared, self.up, extra):
                self.add(hit.rule, hit.severity, hit.message, hit.key, where, declared.text, source=hit.source)

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
        if _EXTRA_INDEX.search(commands) and not _UV.search(commands):  # flag, env or pip.conf key
            self.extra_index = True
        # A requirements file is pip's own syntax (abbreviated options, `-iURL`): its reader parses it;
        # package names there are judged with the file's declarations.
        pip_runs = [] if self.requirements else sh.pip_arguments(commands)
        flagged = {index for args in pip_runs for index in self._pip(line, args)}
        if self.requirements:
            flagged |= set(self._indexes(line, requirements.indexes_of_line(text)))
        flagged |= self._conda(line, self.condarc.feed(text) if self.condarc else sh.conda_channels(commands))
        flagged |= set(self._indexes(line, self.settings.feed(text)))
        context = self._context(text)
        for url in urls:
            hub = hub_target(url) if context == "install" else None
            if hub:
                self._hub_reference(hub.repo, hub.revision, "installed from the Hub", line.where, line.text)
                continue
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

    def _hub_reference(self, repo: str, revision: str | None, how: str, where: str, text: str) -> None:
        """Code of a Hub repo installed or run: a `repo-reference` with `code`, judged by that repo's own vet."""
        if repo == self.own_repo:
            return
        if repo.startswith(("spaces/", "datasets/")):  # not a model repo: no vet of it can be required
            self.add("unknown-code-install", Severity.MEDIUM, f"line {where}: {how}: runs code from the Hub's "
                     f"{repo}, which no vet covers", repo, where, text, source=f"huggingface.co/{repo}")
            return
        ref = RepoReference(repo, revision, self.path, how, code=True)
        key = f"{repo}@{revision}"
        if (REFERENCE_RULE, key) in self.seen:
            return
        self.seen.add((REFERENCE_RULE, key))
        self.sink.add(REFERENCE_RULE, Severity.INFO, f"line {where}: {how}: runs the code of {repo}"
                      f"{'@' + revision if revision else ''}, which this vet does not cover", evidence=ref.evidence())

    def _download_execute(self, where: str, text: str, urls: list[str]) -> None:
        parsed = where in self.parsed  # the parsed program judged this line's shell, download by download
        why = sh.download_and_execute(text, parsed)
        if why:
            self._report_execute(why, urls, where, text, key=text)
        # Downloads loaded as libraries (LD_PRELOAD, CDLL) are the tracker's; a file run shares its key.
        for fetched_at, url, _run in self.tracker.feed(where, text, urls, loads_only=parsed):
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
        # uv asks its indexes in order and stops at the first that has the name; pip merges them all.
        self.extra_index |= any(a.startswith("--extra-index-url") for a in args) and not _UV.search(line.text)
        for spec in targets:
            name = sh.package_name(spec)
            if name:
                self._package(line, name)
        return untrusted

    def _package(self, line: Line, name: str) -> None:
        hit = package_judgement(name, self.up, self.extra_index, "pip install")
        if hit:
            self.add(hit.rule, hit.severity, hit.message, hit.key, line.where, line.text, source=hit.source)
