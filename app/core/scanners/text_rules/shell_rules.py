"""Install commands in text: download-and-execute idioms, pip arguments, container images.

Everything here reads command *text*; nothing is run. Patterns favour recall on the idioms
attackers use (``curl | sh``, ``iex (iwr ...)``, ``base64 -d | sh``) over parsing shell exactly.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from urllib.parse import urlsplit

_DL = r"(?:curl|wget|fetch|aria2c|iwr|irm|invoke-webrequest|invoke-restmethod|(?:new-object\s+)?net\.webclient)"
_RUNNER = (
    r"(?:sudo(?:\s+-\S+)*\s+)?(?:env\s+(?:\S+=\S*\s+)*)?(?:/usr/(?:local/)?bin/|/bin/)?"
    r"(?:(?:ba|z|da|k|fi|c|tc)?sh|python[\d.]*|py|perl|ruby|node|php|iex|invoke-expression|source)\b"
)
DOWNLOAD_AND_EXECUTE = (
    ("pipes a download into an interpreter", re.compile(rf"\b{_DL}\b[^|\n]{{0,1000}}\|\s*{_RUNNER}", re.I)),
    ("runs a download through process substitution",
     re.compile(rf"(?:\b(?:ba|z|da|k)?sh|\bsource|(?:^|\s)\.|\bpython[\d.]*)\s+<\(\s*{_DL}\b", re.I)),
    ("runs a download through command substitution", re.compile(
        rf"(?:\b(?:ba|z|da|k)?sh\s+-c|\beval|\bpython[\d.]*\s+-c|\bperl\s+-e|\bnode\s+-e|\bexec)\s+"
        rf"[\"']?(?:\$\(|`)\s*{_DL}\b", re.I)),
    ("decodes base64 into an interpreter",
     re.compile(rf"\bbase64\s+(?:-d|--decode|-D)\b[^|\n]{{0,1000}}\|\s*{_RUNNER}", re.I)),
    ("PowerShell Invoke-Expression of a download", re.compile(
        r"\b(?:iex|invoke-expression)\b.{0,300}?\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|"
        r"downloadstring|downloaddata|net\.webclient|frombase64string)\b", re.I)),
    ("PowerShell encoded command", re.compile(
        r"\bpowershell(?:\.exe)?\b.{0,300}?\s-(?:e|ec|enc|encodedcommand)\s+[A-Za-z0-9+/=]{16,}", re.I)),
    ("mshta runs a remote script", re.compile(r"\bmshta(?:\.exe)?\s+[\"']?(?:https?|javascript|vbscript):", re.I)),
    ("python -c execs downloaded code", re.compile(
        r"\bpython[\d.]*\s+-c\s+.{0,500}?\b(?:exec|eval)\s*\(.{0,500}?\b(?:urlopen|urllib|requests\.get|httpx)",
        re.I)),
)
_SEGMENTS = re.compile(r"&&|\|\||;|\n")
_DOWNLOAD_CMD = re.compile(rf"^\s*(?:sudo\s+)?(?:{_DL}|certutil(?:\.exe)?|bitsadmin|start-bitstransfer)\b", re.I)
_OUTPUT_OPTS = {"-o", "-O", "--output", "--output-document", "-outfile", "-OutFile"}
_RUN = re.compile(
    r"^\s*(?:sudo(?:\s+-\S+)*\s+)?(?:chmod\s+(?:[ugoa]*\+x|[0-7]{3,4})\s+|(?:ba|z|da)?sh\s+|python[\d.]*\s+|"
    r"source\s+|\.\s+|perl\s+|start\s+|&\s*|dpkg\s+-i\s+|rpm\s+-i\w*\s+|msiexec\s+/i\s+)?[\"']?"
    r"(?:[\w.~$%:/\\-]*[/\\])?(?P<name>[\w.+-]+)",
    re.I,
)
_PIP = re.compile(r"\b(?:pip[\d.]*|uv\s+pip|python[\d.]*\s+-m\s+pip|pipx)\s+install\b(?P<args>[^;&|\n]*)", re.I)
_DOCKER = re.compile(
    r"\b(?:docker|podman|nerdctl)\s+(?:container\s+|image\s+)?(?:run|pull|create)\b(?P<args>[^;&|\n]*)"
)
_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(?P<image>[\w./:@${}-]+)(?:\s+AS\s+(?P<stage>[\w.-]+))?\s*$")
_IMAGE_KEY = re.compile(r"^\s*-?\s*image:\s*[\"']?(?P<image>[\w./:@-]+)[\"']?\s*$")
_DOCKER_BOOL = {"--rm", "--privileged", "--init", "--detach", "--interactive", "--tty", "--read-only",
                "--publish-all", "--no-healthcheck", "--oom-kill-disable", "--quiet", "--all-tags"}
PIP_VALUE_OPTS = {
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url", "--extra-index-url",
    "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--trusted-host", "--platform",
    "--python-version", "--implementation", "--abi", "--no-binary", "--only-binary", "-C", "--config-settings",
    "--global-option", "--install-option", "--src", "--upgrade-strategy", "--progress-bar", "--log",
    "--cache-dir", "--python", "--index-strategy", "--default-index", "--index", "--group", "--extra",
}
PIP_INDEX_OPTS = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host",
                  "--default-index", "--index"}


def download_and_execute(text: str) -> str | None:
    """What download-and-execute idiom the command text uses, if any."""
    return next((why for why, pattern in DOWNLOAD_AND_EXECUTE if pattern.search(text)), None)


def split_args(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:  # unbalanced quotes in prose
        return text.split()


def pip_arguments(text: str) -> list[list[str]]:
    return [split_args(m.group("args")) for m in _PIP.finditer(text)]


def pip_targets(args: list[str]) -> tuple[list[str], list[str]]:
    """(package specs and URLs, index/trusted-host values) of one pip install argument list."""
    targets: list[str] = []
    indexes: list[str] = []
    pending: str | None = None
    for arg in args:
        if pending:
            if pending in PIP_INDEX_OPTS:
                indexes.append(arg)
            elif pending in ("-e", "--editable"):
                targets.append(arg)
            pending = None
        elif arg.startswith("-"):
            option, eq, value = arg.partition("=")
            if eq and option in PIP_INDEX_OPTS:
                indexes.append(value)
            elif not eq and option in PIP_VALUE_OPTS:
                pending = option
        else:
            targets.append(arg)
    return targets, indexes


def package_name(spec: str) -> str | None:
    """The PyPI project name of a requirement spec, or None for URLs, paths and variables."""
    if "://" in spec or spec.startswith(("git+", "git@", ".", "/", "~", "$")) or "/" in spec or "\\" in spec:
        return None
    match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    if not match or re.search(r"\.(?:whl|zip|tar\.gz|tgz)$", spec, re.I):
        return None
    return match.group(1)


def docker_images(text: str, stages: set[str], strict_from: bool) -> list[str]:
    """Images a line runs or builds from; ``stages`` collects Dockerfile ``AS`` names."""
    images = [img for m in _DOCKER.finditer(text) if (img := _docker_run_image(split_args(m.group("args"))))]
    flags = 0 if strict_from else re.I
    from_match = re.match(_FROM.pattern, text, flags)
    if from_match:
        if from_match.group("stage"):
            stages.add(from_match.group("stage").lower())
        images.append(from_match.group("image"))
    key = _IMAGE_KEY.match(text)
    if key:
        images.append(key.group("image"))
    return [i for i in images if "$" not in i and "{" not in i and i.lower() not in stages | {"scratch"}]


def _docker_run_image(args: list[str]) -> str | None:
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg.startswith("-"):
            short_bools = re.fullmatch(r"-[ditPqa]+", arg)
            skip = not ("=" in arg or short_bools or arg in _DOCKER_BOOL)
        else:
            return arg
    return None


class DownloadTracker:
    """Remembers files fetched by curl/wget so a later ``chmod +x``/``./file``/``sh file`` is caught."""

    def __init__(self) -> None:
        self.fetched: dict[str, tuple[str, str]] = {}  # file name -> (where downloaded, URL)

    def feed(self, where: str, text: str, urls: list[str]) -> list[tuple[str, str, str]]:
        """(download location, URL, run command) for every run of a file fetched earlier."""
        runs: list[tuple[str, str, str]] = []
        for segment in _SEGMENTS.split(text):
            if _DOWNLOAD_CMD.match(segment):
                self._record(where, segment, urls)
                continue
            match = _RUN.match(segment)
            name = match.group("name").lower() if match else None
            if name and name in self.fetched:
                runs.append((*self.fetched[name], segment.strip()))
        return runs

    def _record(self, where: str, segment: str, urls: list[str]) -> None:
        args = split_args(segment)
        url = next((u for u in urls if u in segment), None) or next((a for a in args if "://" in a), None)
        if not url:
            return
        names = {posixpath.basename(urlsplit(url).path)}
        for i, arg in enumerate(args[:-1]):
            if arg in _OUTPUT_OPTS and args[i + 1] != "-":
                names.add(posixpath.basename(args[i + 1].replace("\\", "/")))
        for arg in args:
            if arg.startswith("--output-document="):
                names.add(posixpath.basename(arg.split("=", 1)[1]))
        for name in names - {""}:
            self.fetched[name.lower()] = (where, url)
