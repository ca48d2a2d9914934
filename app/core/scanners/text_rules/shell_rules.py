"""Install commands in text: download-and-execute idioms, pip arguments, container images.

Everything here reads command *text*; nothing is run. Patterns favour recall on the idioms
attackers use (``curl | sh``, ``iex (iwr ...)``, ``base64 -d | sh``) over parsing shell exactly.
"""

from __future__ import annotations

import json
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
_SEPARATED = re.compile(r"(&&|\|\||;|\n)")
_DOWNLOAD_CMD = re.compile(rf"^\s*(?:sudo\s+)?(?:{_DL}|certutil(?:\.exe)?|bitsadmin|start-bitstransfer)\b", re.I)
_OUTPUT_OPTS = {"-o", "-O", "--output", "--output-document", "-outfile", "-OutFile"}
_RUN = re.compile(
    r"^\s*(?:sudo(?:\s+-\S+)*\s+)?(?:chmod\s+(?:[ugoa]*\+x|[0-7]{3,4})\s+|(?:ba|z|da)?sh\s+|python[\d.]*\s+|"
    r"source\s+|\.\s+|perl\s+|start\s+|&\s*|dpkg\s+-i\s+|rpm\s+-i\w*\s+|msiexec\s+/i\s+)?[\"']?"
    r"(?:[\w.~$%:/\\-]*[/\\])?(?P<name>[\w.+-]+)",
    re.I,
)
# uv add/tool install and pipx take pip's sources (URLs, --index, --extra-index-url, -f).
_PIP = re.compile(r"\b(?:(?:pip[\d.]*|uv\s+pip|python[\d.]*\s+-m\s+pip|pipx|uv\s+tool)\s+install|uv\s+add)\b"
                  r"(?P<args>[^;&|\n]*)", re.I)
_CONDA = re.compile(r"\b(?:conda|mamba|micromamba)\s+(?:env\s+)?(?:install|create|update)\b(?P<args>[^;&|\n]*)",
                    re.I)
_CHANNEL_OPTS = ("-c", "--channel")
# The loader maps these libraries into every process it starts; Python loads them by name too.
_PRELOAD = re.compile(r"\b(?:LD_PRELOAD|DYLD_INSERT_LIBRARIES)\s*[= ]\s*[\"']?(?P<libs>[^\s\"';&|]+)")
# onnxruntime's SessionOptions.register_custom_ops_library maps a custom-op library in-process.
_NATIVE_LOAD = re.compile(
    r"\b(?:CDLL|PyDLL|WinDLL|LoadLibrary|load_library|dlopen|register_custom_ops_library)\s*\("
    r"\s*[rbuf]?[\"'](?P<lib>[^\"']+)")
_DOCKER_RUN = re.compile(r"^\s*RUN\s+(?:--\S+\s+)*", re.I)
_DOCKER_ADD = re.compile(r"^\s*ADD\s+(?:--\S+\s+)*(?P<args>.+)$", re.I)
_SHELL_ASSIGN = re.compile(r"^\s*(?:export\s+|readonly\s+|local\s+)?(?P<name>[A-Za-z_]\w*)="
                           r"(?P<value>\"[^\"]*\"|'[^']*'|\S*)\s*$")
_DOCKER_ASSIGN = re.compile(r"^\s*(?:ARG|ENV)\s+(?P<body>.+)$", re.I)
_PS_ASSIGN = re.compile(r"^\s*\$(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>\"[^\"]*\"|'[^']*'|\S+)\s*;?\s*$")
# Where pip, uv and conda read package sources besides their command line: the environment,
# `pip config set`, and config files (pip.conf, uv.toml, pyproject's [[tool.uv.index]], .condarc).
_INDEX_ENV = re.compile(
    r"\b(?:PIP_(?:INDEX_URL|EXTRA_INDEX_URL|FIND_LINKS|TRUSTED_HOST)|UV_(?:INDEX_URL|EXTRA_INDEX_URL|INDEX|"
    r"DEFAULT_INDEX|FIND_LINKS))\s*[= ]\s*[\"']?(?P<value>[^\s\"';&|]+)")
_PIP_CONFIG = re.compile(r"\bpip[\d.]*\s+config\s+set\s+\S*?(?:index-url|find-links|trusted-host)\s+[\"']?"
                         r"(?P<value>[^\s\"']+)", re.I)
_INDEX_KEY = re.compile(r"^\s*(?:extra[-_])?(?:index[-_]url|find[-_]links|trusted[-_]host|default[-_]index)\s*[=:]\s*"
                        r"[\"'\[]?(?P<value>[^\s\"'\],]+)", re.I)
_URL_KEY = re.compile(r"^\s*url\s*=\s*[\"'](?P<value>[^\"']+)[\"']")
_INDEX_SECTION = re.compile(r"^\s*\[\[?\s*(?:tool\.(?:uv\.index|poetry\.source|pdm\.source)|index)\s*\]\]?\s*$")
_SECTION = re.compile(r"^\s*\[")
_SOURCE_VALUE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://\S+|[\w-]+(?:\.[\w-]+)+(?::\d+)?(?:/\S*)?)$", re.I)
_YAML_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w-]*)\s*:(?P<rest>.*)$")
_YAML_ITEM = re.compile(r"^\s+-\s*[\"']?(?P<value>[^\s\"'#]+)")
_REFERENCE = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_]\w*)(?::?-(?P<default>[^}]*))?\}|(?P<bare>[A-Za-z_]\w*))")
MAX_VARIABLES = 256
MAX_VALUE_CHARS = 2048
MAX_SUBSTITUTED_CHARS = 16 * 1024  # per line, across all its substitutions
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


# The idioms a POSIX shell or Python runs: on a line the shell parser read, its verdict replaces these.
SHELL_IDIOMS = frozenset({"pipes a download into an interpreter", "runs a download through process substitution",
                          "runs a download through command substitution", "python -c execs downloaded code"})


def download_and_execute(text: str, parsed: bool = False) -> str | None:
    """What download-and-execute idiom the command text uses, if any (on a ``parsed`` line: only the
    PowerShell and Windows idioms, which the shell parser does not read)."""
    return next((why for why, pattern in DOWNLOAD_AND_EXECUTE
                 if not (parsed and why in SHELL_IDIOMS) and pattern.search(text)), None)


# Where a pip command written in prose or a comment ends: its code span or parenthesis closes, or the
# sentence goes on ("pip install faiss-gpu or pip install faiss-cpu").
_CODE_SPAN_END = re.compile(r"`|\)(?=[\s,.;:]|$)|\s(?:or|and|then|to|if|for)\s")


def split_args(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:  # unbalanced quotes in prose
        return text.split()


def pip_arguments(text: str) -> list[list[str]]:
    """Each pip command's arguments, up to where its inline code span or parenthesis closes or its sentence
    goes on: prose after ``(`pip install kernels`), not from a ...`` is no package list."""
    return [split_args(_CODE_SPAN_END.split(m.group("args"), maxsplit=1)[0]) for m in _PIP.finditer(text)]


class IndexSettings:
    """Package sources set outside a pip command line; ``feed`` returns those a line sets."""

    def __init__(self) -> None:
        self.in_index_table = False

    def feed(self, text: str) -> list[str]:
        if _SECTION.match(text):
            self.in_index_table = bool(_INDEX_SECTION.match(text))
            return []
        values = [m.group("value") for m in _INDEX_ENV.finditer(text)]
        values += [m.group("value") for m in _PIP_CONFIG.finditer(text)]
        key = _INDEX_KEY.match(text) or (_URL_KEY.match(text) if self.in_index_table else None)
        if key and _SOURCE_VALUE.match(key.group("value")):  # `default_index: 0` in a YAML is no index
            values.append(key.group("value"))
        return [v for v in values if "$" not in v]


class CondarcChannels:
    """Channels a ``.condarc`` lists (``channels:`` / ``default_channels:``, block or flow style)."""

    def __init__(self) -> None:
        self.in_channels = False

    def feed(self, text: str) -> list[str]:
        key = _YAML_KEY.match(text)
        if key:
            self.in_channels = key.group("key") in ("channels", "default_channels")
            flow = key.group("rest").strip()
            if self.in_channels and flow.startswith("["):
                return [c.strip(" '\"") for c in flow.strip("[]").split(",") if c.strip(" '\"")]
            return []
        item = _YAML_ITEM.match(text)
        return [item.group("value")] if self.in_channels and item else []


def conda_channels(text: str) -> list[str]:
    """Channels of every ``conda/mamba install|create -c CHANNEL`` in the text."""
    channels: list[str] = []
    for match in _CONDA.finditer(text):
        args = split_args(match.group("args"))
        for i, arg in enumerate(args):
            option, eq, value = arg.partition("=")
            if eq and option in _CHANNEL_OPTS:
                channels.append(value)
            elif arg in _CHANNEL_OPTS and i + 1 < len(args):
                channels.append(args[i + 1])
            elif arg.startswith("-c") and len(arg) > 2 and not arg.startswith("--"):
                channels.append(arg[2:])
    return [c for c in channels if c]


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
        elif arg.startswith(("-i", "-f")) and len(arg) > 2 and not arg.startswith("--"):
            indexes.append(arg[2:])  # `-ihttps://...`: pip takes a short option's value attached
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


def _docker_add(segment: str) -> tuple[list[str], str] | None:
    """(URL sources, destination) of a Dockerfile ``ADD``, shell or JSON form; None without URLs."""
    match = _DOCKER_ADD.match(segment)
    if not match:
        return None
    body = match.group("args").strip()
    try:
        args = json.loads(body) if body.startswith("[") else split_args(body)
    except ValueError:
        args = split_args(body.strip("[]").replace(",", " "))
    if not isinstance(args, list) or len(args) < 2 or not all(isinstance(a, str) for a in args):
        return None
    urls = [a for a in args[:-1] if "://" in a]
    return (urls, args[-1]) if urls else None


class Variables:
    """Values of ``ARG``/``ENV`` (Dockerfile) and ``NAME=value`` (shell) lines, substituted into
    later lines as the build or the shell would (``$NAME``, ``${NAME}``, ``${NAME:-default}``)."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def resolve(self, text: str, budget: int = MAX_SUBSTITUTED_CHARS) -> str:
        """``text`` with known variables substituted, segment by segment, each segment's own
        assignments taking effect for the next (``H=x.invalid; wget https://$H/y``). At most
        ``budget`` characters are substituted: ``$A$A$A...`` must not multiply the line."""
        parts = _SEPARATED.split(text)
        out: list[str] = []
        for index, part in enumerate(parts):
            if index % 2 == 0:  # a segment; odd indexes are the separators between them
                part, budget = self._expand(part, budget)
                self.assign(part)
            out.append(part)
        return "".join(out)

    def _expand(self, text: str, budget: int) -> tuple[str, int]:
        if "$" not in text:
            return text, budget
        left = budget

        def value(match: re.Match[str]) -> str:
            nonlocal left
            name = match.group("braced") or match.group("bare")
            known = self.values.get(name)
            if known is None:
                known = match.group("default")
            if known is None or len(known) > left:
                return match.group(0)
            left -= len(known)
            return known

        return _REFERENCE.sub(value, text), left

    def assign(self, text: str) -> None:
        docker = _DOCKER_ASSIGN.match(text)
        if docker:
            args = split_args(docker.group("body"))
            pairs = [a.partition("=")[::2] for a in args if "=" in a]
            if not pairs and len(args) >= 2:  # legacy `ENV NAME value`
                pairs = [(args[0], " ".join(args[1:]))]
            for name, value in pairs:
                self._set(name, value)
            return
        shell = _SHELL_ASSIGN.match(text) or _PS_ASSIGN.match(text)
        if shell:
            self._set(shell.group("name"), shell.group("value").strip("\"'"))

    def _set(self, name: str, value: str) -> None:
        if re.fullmatch(r"[A-Za-z_]\w*", name) and (name in self.values or len(self.values) < MAX_VARIABLES):
            self.values[name] = value[:MAX_VALUE_CHARS]


class DownloadTracker:
    """Remembers files fetched by curl/wget (or a Dockerfile ``ADD``) so a later ``chmod +x``,
    ``./file``, ``sh file``, ``python file``, ``LD_PRELOAD=file`` or ``CDLL("file")`` is caught."""

    def __init__(self) -> None:
        self.fetched: dict[str, tuple[str, str]] = {}  # file name -> (where downloaded, URL)

    def feed(self, where: str, text: str, urls: list[str], loads_only: bool = False) -> list[tuple[str, str, str]]:
        """(download location, URL, run command) for every run of a file fetched earlier (with ``loads_only``,
        only library loads: on a line the shell parser read, runs are its)."""
        runs: list[tuple[str, str, str]] = []
        for segment in _SEGMENTS.split(text):
            segment = _DOCKER_RUN.sub("", segment)
            if _DOWNLOAD_CMD.match(segment):
                self._record(where, segment, urls)
                continue
            added = _docker_add(segment)
            if added:
                for url in added[0]:
                    self._remember(where, url, [added[1]] if len(added[0]) == 1 else [])
                continue
            runs.extend((*self.fetched[n], segment.strip()) for n in self._runs(segment, loads_only)
                        if n in self.fetched)
        return runs

    @staticmethod
    def _runs(segment: str, loads_only: bool = False) -> list[str]:
        """Names of the files the segment runs or loads."""
        names = [posixpath.basename(lib.replace("\\", "/")).lower()
                 for match in _PRELOAD.finditer(segment) for lib in re.split(r"[: ]", match.group("libs"))]
        names += [posixpath.basename(m.group("lib").replace("\\", "/")).lower() for m in _NATIVE_LOAD.finditer(segment)]
        match = None if loads_only else _RUN.match(segment)
        if match:
            names.append(match.group("name").lower())
        return names

    def _record(self, where: str, segment: str, urls: list[str]) -> None:
        args = split_args(segment)
        url = next((u for u in urls if u in segment), None) or next((a for a in args if "://" in a), None)
        if not url:
            return
        outputs = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg in _OUTPUT_OPTS and args[i + 1] != "-"]
        outputs += [arg.split("=", 1)[1] for arg in args if arg.startswith("--output-document=")]
        self._remember(where, url, outputs)

    def _remember(self, where: str, url: str, outputs: list[str]) -> None:
        try:
            names = {posixpath.basename(urlsplit(url).path)}
        except ValueError:
            names = set()
        names |= {posixpath.basename(o.replace("\\", "/")) for o in outputs}  # `ADD url dir/` keeps url's name
        for name in names - {""}:
            self.fetched[name.lower()] = (where, url)
