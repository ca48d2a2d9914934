"""One command of a walked script: what it does with downloaded bytes (see ``flow``)."""

from __future__ import annotations

import posixpath
import re
from typing import Protocol

from app.core.scanners.text_rules.hub_code import hub_target
from app.core.scanners.text_rules.shell import commands as cmd
from app.core.scanners.text_rules.shell.pycode import fetches_and_runs
from app.core.scanners.text_rules.shell.values import HubCode, Input, Taint, Val, hub_repo, norm

_URL = re.compile(r"(?:https?|ftp)://[^\s\"'`<>|;&)]+")
_STDIN = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
_ARCHIVE = re.compile(r"\.(?:tar\.(?:gz|bz2|xz|zst)|tgz|tbz2?|txz|zip|tar|7z|rar)$", re.I)


class State(Protocol):
    files: dict[str, Taint]
    hub_dirs: dict[str, HubCode]
    hub: list[HubCode]
    cwd: str
    extracted: dict[str, Taint]


class Walker(Protocol):
    @property
    def flow(self) -> State: ...

    def report(self, at: int, taint: Taint, why: str) -> None: ...

    def nested(self, script: str, at: int) -> None: ...


class Command:
    def __init__(self, walker: Walker, core: cmd.Argv, args: list[Val], stdin: Input, at: int) -> None:
        self.w, self.name, self.path, self.args, self.stdin, self.at = walker, core.name, core.path, args, stdin, at
        self.state = walker.flow

    def run(self) -> Input:
        name = self.name
        if "/" in self.path and not self.path.startswith("/"):
            self.run_path()  # `./g/install` is the file, whatever its name says
            return None
        if name in cmd.DOWNLOADERS:
            return self.download()
        if name in ("hf", "huggingface-cli"):
            self.hub_download()
        elif name == "git":
            self.git()
        elif name == "chmod":
            self.chmod()
        elif name == "cd":
            self.state.cwd = norm(self.texts()[0]) if self.texts() else ""
        elif name in ("pip", "pip3", "uv", "pipx") or re.match(r"^pip\d", name):
            self.install()
        elif name in cmd.FILTERS:
            return self.filter()
        elif name in cmd.COPIERS:
            self.copy()
        elif name in cmd.EXTRACTORS:
            self.extract()
        elif name in cmd.SHELLS:
            self.shell()
        elif cmd.PYTHONS.match(name):
            self.python()
        elif name in cmd.OTHER_INTERPRETERS:
            self.interpreter()
        elif name in cmd.SOURCING:
            self.sourced()
        elif name == "eval":
            self.eval()
        else:
            self.run_path()
        return None

    # -- where bytes come from and go ---------------------------------------------------------
    def download(self) -> Input:
        # A URL word is the URL whole, substitutions included (`.../linux-$(uname -i).run`): its basename is
        # the file a later command runs.
        urls = [a.text for a in self.args if _URL.match(a.text)] or [
            m.group(0) for a in self.args for m in _URL.finditer(a.text)]
        dynamic = any("$" in a.text for a in self.args)
        if not urls and not dynamic:
            return None
        url = urls[0] if urls else "?"
        files, to_stdout = cmd.download_outputs(self.name, tuple(a.text for a in self.args), url)
        taint = Taint(url, self.at, tuple(urls))
        for path in files:
            self.remember(path, taint)
        return taint if to_stdout else None

    def chmod(self) -> None:
        """`chmod +x` of a download: it is made to run (the step before running it, often in another file)."""
        texts = self.texts()
        if not any(re.match(r"^(?:[ugoa]*\+[rwX]*x|0?[0-7]?[1357][0-7]{2}|[0-7]{2}[1357])$", t) for t in texts):
            return
        for path in self.operands():
            taint = self.file_taint(path)
            if taint:
                self.w.report(self.at, taint, f"makes the downloaded {path[:80]} executable")
                return

    def filter(self) -> Input:
        taint = self.stdin if isinstance(self.stdin, Taint) else None
        operands = self.operands()
        if self.name == "tee":
            for path in operands:
                if taint:
                    self.remember(path, taint)
            return self.stdin
        if self.name == "dd":
            operands = [a.text[3:] for a in self.args if a.text.startswith("if=")]
        return taint or next((t for p in operands if (t := self.file_taint(p))), None) or (
            self.stdin if isinstance(self.stdin, str) else None)

    def copy(self) -> None:
        operands = self.operands()
        if len(operands) < 2:
            return
        taint = next((t for p in operands[:-1] if (t := self.file_taint(p))), None)
        if taint:
            self.remember(operands[-1], taint)
            for source in operands[:-1]:
                self.remember(posixpath.join(operands[-1], posixpath.basename(source)), taint)

    def extract(self) -> None:
        """An archive unpacks under its own name (`llamafile-0.8.6.zip` -> `llamafile-0.8.6/`): only a path
        under that name is its content (a dataset zip does not make the repo's scripts downloads)."""
        found = [(p, t) for p in self.operands() if (t := self.file_taint(p))]
        if not found and isinstance(self.stdin, Taint):
            found = [(cmd.url_basename(self.stdin.url), self.stdin)]
        for archive, taint in found:
            stem = _ARCHIVE.sub("", posixpath.basename(archive))
            if stem:
                self.state.extracted[stem] = taint

    def remember(self, path: str, taint: Taint) -> None:
        key = norm(path)
        if key:
            self.state.files[key] = taint
            self.state.files[posixpath.basename(key)] = taint

    def file_taint(self, path: str) -> Taint | None:
        key = norm(path)
        return self.state.files.get(key) or self.state.files.get(posixpath.basename(key)) if key else None

    # -- what runs them -----------------------------------------------------------------------
    def shell(self) -> None:
        args = self.args[1:] if self.name == "busybox" and self.args and self.args[0].text.endswith("sh") else self.args
        script = self.option_value(args, ("-c",))
        if script is not None:
            self.run_string(script, "a shell runs")
            return
        self.run_program(_shell_operands(args), "a shell runs")

    def python(self) -> None:
        code = self.option_value(self.args, ("-c",))
        if code is not None:
            if code.taint:
                self.w.report(self.at, code.taint, "Python runs downloaded code given with -c")
            elif (url := fetches_and_runs(code.text)) is not None:
                self.w.report(self.at, Taint(url, self.at), "python -c downloads code and runs it")
            return
        module = self.option_value(self.args, ("-m",))
        if module is not None:
            if module.text == "pip":
                self.args = self.args[self.args.index(module) + 1:]
                self.install()
            return
        self.run_program(self.args, "Python runs", python=True)

    def interpreter(self) -> None:
        code = self.option_value(self.args, ("-e", "-c", "-Command", "--eval"))
        if code is not None:
            self.run_string(code, f"{self.name} runs", shell=False)
            return
        self.run_program(self.args, f"{self.name} runs")

    def sourced(self) -> None:
        self.run_program(self.args, "the shell sources")

    def eval(self) -> None:
        taint = next((a.taint for a in self.args if a.taint), None)
        if taint:
            self.w.report(self.at, taint, "eval runs downloaded text")
        else:
            self.w.nested(" ".join(a.text for a in self.args), self.at)

    def run_path(self) -> None:
        taint = self.file_taint(self.path)
        if taint:
            self.w.report(self.at, taint, f"runs the downloaded file {self.path[:80]}")
        elif (extracted := self.state.extracted.get(norm(self.path).split("/")[0])) and "/" in self.path:
            self.w.report(self.at, extracted, f"runs {self.path[:80]} from an extracted download")
        hub = self.hub_of(self.path) if "/" in self.path else None
        if hub:
            self.hub_code(hub, f"runs {self.path[:80]} from a Hub repo")

    def run_string(self, script: Val, why: str, shell: bool = True) -> None:
        if script.taint:
            self.w.report(self.at, script.taint, f"{why} downloaded text")
        elif shell:
            self.w.nested(script.text, self.at)

    def run_program(self, args: list[Val], why: str, python: bool = False) -> None:
        operand = next((a for a in args if not a.text.startswith("-") or a.text == "-"), None)
        if operand is None or operand.text in _STDIN:
            if isinstance(self.stdin, Taint):
                self.w.report(self.at, self.stdin, f"{why} a download it reads from stdin")
            elif isinstance(self.stdin, str):
                self.read_literal(self.stdin, python)
            return
        taint = operand.taint if operand.path else self.file_taint(operand.text)
        if taint:
            self.w.report(self.at, taint, f"{why} the downloaded {operand.text[:80]}")
        hub = self.hub_of(operand.text)
        if hub:
            self.hub_code(hub, f"runs {operand.text[:80]} from a Hub repo")

    def read_literal(self, body: str, python: bool) -> None:
        if python:
            if (url := fetches_and_runs(body)) is not None:
                self.w.report(self.at, Taint(url, self.at), "Python reads a here-document that downloads and runs code")
        else:
            self.w.nested(body, self.at + 1)

    # -- the Hub as a code host ----------------------------------------------------------------
    def hub_download(self) -> None:
        texts = self.texts()
        if "download" not in texts[:1]:
            return
        operands = [t for t in self.operands() if t != "download"]
        found = hub_repo(operands[0]) if operands else None
        if not found:
            return
        revision = self.option_text(("--revision",)) or found[1]
        where = self.option_text(("--local-dir",)) or found[0].split("/")[1]
        self.state.hub_dirs[norm(where)] = HubCode(self.at, found[0], revision, "hf download")

    def git(self) -> None:
        operands = self.operands()
        if not operands or operands[0] != "clone" or len(operands) < 2:
            return
        found = hub_target(operands[1])
        if found:
            where = operands[2] if len(operands) > 2 else found.repo.rsplit("/", 1)[1]
            revision = self.option_text(("--branch", "-b")) or found.revision
            self.state.hub_dirs[norm(where)] = HubCode(self.at, found.repo, revision, "git clone")

    def install(self) -> None:
        operands = [t for t in self.operands() if t not in ("install", "pip", "add", "run", "tool", "sync")]
        for value in operands + [v for k in ("-e", "--editable") if (v := self.option_text((k,)))]:
            hub = self.hub_of(value) if _path_like(value) else None
            if hub:
                self.hub_code(hub, f"installs {value[:80]} fetched from a Hub repo")

    def hub_of(self, path: str) -> HubCode | None:
        """The Hub repo a path lies in: relative to the directory `cd` last named, or as written (a reader
        cannot tell whether that `cd` ran)."""
        keys = [norm(path)]
        if self.state.cwd and not path.startswith("/"):
            keys.insert(0, norm(posixpath.join(self.state.cwd, path)))
        dirs = self.state.hub_dirs
        if "." in dirs and not path.startswith(("/", "~")):  # downloaded into the working directory
            return dirs["."]
        for key in keys:
            parts = key.split("/")
            found = next((dirs[p] for p in ("/".join(parts[:n]) for n in range(len(parts), 0, -1)) if p in dirs), None)
            if found:
                return found
        return None

    def hub_code(self, hub: HubCode, how: str) -> None:
        """Code of a Hub repo installed or run: judged as that repo's code (the policy's references)."""
        self.state.hub.append(HubCode(self.at, hub.repo, hub.revision, f"{hub.how} then {how}"))

    # -- argument helpers ---------------------------------------------------------------------
    def texts(self) -> list[str]:
        return [a.text for a in self.args]

    def operands(self) -> list[str]:
        return [a.text for a in self.args if not a.text.startswith("-")]

    def option_value(self, args: list[Val], names: tuple[str, ...]) -> Val | None:
        for i, arg in enumerate(args):
            if arg.text in names and i + 1 < len(args):
                return args[i + 1]
            if arg.text.startswith("-") and not arg.text.startswith("--") and names[0] in ("-c",) \
                    and arg.text.endswith("c") and len(arg.text) > 2 and i + 1 < len(args):
                return args[i + 1]  # `bash -ec "..."`, `sh -xc`
        return None

    def option_text(self, names: tuple[str, ...]) -> str | None:
        for i, arg in enumerate(self.args):
            for name in names:
                if arg.text == name and i + 1 < len(self.args):
                    return self.args[i + 1].text
                if arg.text.startswith(name + "="):
                    return arg.text[len(name) + 1:]
        return None


def _path_like(value: str) -> bool:
    """A pip operand naming a directory or file, not a distribution name (`.`, `./d`, `d/`, `/opt/x`)."""
    return value.startswith((".", "/", "~")) or ("/" in value and "://" not in value and "@" not in value)


def _shell_operands(args: list[Val]) -> list[Val]:
    """What a shell runs: `-s` (or no file) means stdin, whatever follows; else its first operand."""
    for i, arg in enumerate(args):
        if arg.text == "--":
            return args[i + 1:]
        if arg.text.startswith("-") and not arg.text.startswith("--") and "s" in arg.text[1:]:
            return []  # `bash -s -- args`: the program is stdin
        if not arg.text.startswith(("-", "+")):
            return args[i:]
    return []
