"""What well-known commands do with their input and output, read from their argument lists.

Only what decides where downloaded bytes go and whether they run: wrappers that run another command
(sudo, env, nohup...), downloaders and their output options, filters that pass stdin on, and
interpreters that run a file, a string or their stdin.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass
from urllib.parse import urlsplit

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox"})
PYTHONS = re.compile(r"^(?:python(?:\d+(?:\.\d+)?)?|py|pypy3?)$")
OTHER_INTERPRETERS = frozenset({"perl", "ruby", "node", "php", "lua", "rscript", "pwsh", "powershell", "deno",
                                "bun", "tclsh", "osascript", "iex", "invoke-expression"})
SOURCING = frozenset({"source", "."})
DOWNLOADERS = frozenset({"curl", "wget", "wget2", "aria2c", "fetch", "http", "https", "axel", "xh",
                         "lwp-download", "lwp-request", "get",
                         # PowerShell pasted into a shell block: the same pipe, other names.
                         "iwr", "irm", "invoke-webrequest", "invoke-restmethod"})
# Pass what they read on to stdout (a filter between a download and a shell changes nothing).
FILTERS = frozenset({"cat", "tee", "base64", "gunzip", "gzip", "zcat", "bzcat", "xzcat", "xz", "bzip2", "zstd",
                     "unxz", "tr", "sed", "awk", "gawk", "xxd", "openssl", "gpg", "head", "tail", "dd", "rev",
                     "iconv", "dos2unix", "sort", "uniq", "cut", "grep", "envsubst", "sponge", "pv", "stdbuf",
                     "unbuffer", "tac", "fold"})
COPIERS = frozenset({"mv", "cp", "install", "ln"})
EXTRACTORS = frozenset({"tar", "unzip", "7z", "7za", "bsdtar", "unrar", "cpio", "ar"})
# Run the command that follows their own options: `sudo -E bash`, `env FOO=1 sh`, `nohup ./x`.
_WRAPPERS = {"sudo": {"-u", "-g", "-p", "-C", "-h", "-r", "-t", "-U", "-D", "-R", "-T"}, "doas": {"-u", "-C"},
             "env": {"-u", "-C", "--unset", "--chdir"}, "nohup": set(), "exec": {"-a"}, "command": set(),
             "builtin": set(), "time": {"-f", "-o"}, "nice": {"-n"}, "ionice": {"-c", "-n"},
             "timeout": {"-s", "-k", "--signal", "--kill-after"}, "setsid": set(), "stdbuf": {"-i", "-o", "-e"},
             "chrt": set(), "taskset": set(), "xargs": {"-I", "-n", "-P", "-d", "-L", "-s", "-a", "-E"},
             "runuser": {"-u", "-g"}, "su": {"-s", "-g"}, "srun": set(), "torchrun": set(), "caffeinate": set()}
_TAKES_NUMBER = {"timeout", "chrt", "taskset"}  # a positional before the command (duration, priority, mask)


@dataclass(frozen=True)
class Argv:
    name: str  # basename of the command, lower-cased (`/usr/bin/env` -> `env`)
    path: str  # the command word as written (`./install.sh`, `/usr/bin/env`)
    args: tuple[str, ...]
    via_xargs: bool = False  # stdin becomes arguments, not stdin


def core_command(argv: list[str]) -> Argv | None:
    """The command a chain of wrappers finally runs (`sudo -E env X=1 /bin/bash -s` -> bash -s)."""
    xargs = False
    for _ in range(8):  # wrappers of wrappers, bounded
        if not argv:
            return None
        name = posixpath.basename(argv[0]).lower()
        if name not in _WRAPPERS:
            return Argv(name, argv[0], tuple(argv[1:]), xargs)
        xargs = xargs or name == "xargs"
        argv = _after_wrapper(name, argv[1:])
    return None


def _after_wrapper(name: str, args: list[str]) -> list[str]:
    takes_value = _WRAPPERS[name]
    i = 0
    while i < len(args):
        arg = args[i]
        if name == "env" and arg in ("-S", "--split-string") and i + 1 < len(args):
            return shlex_split(args[i + 1]) + args[i + 2:]
        if arg == "--":
            return args[i + 1:]
        if arg.startswith("-"):
            i += 2 if arg in takes_value else 1
        elif _skipped_positional(name, arg):
            i += 1
        elif name == "su":
            return args[i + 1:]  # su USER -c ...: the user name
        else:
            return args[i:]
    return []


def _skipped_positional(name: str, arg: str) -> bool:
    """`env X=1 cmd`, `sudo X=1 cmd`, `timeout 5m cmd`: a word before the command that is not it."""
    if name in ("env", "sudo") and re.match(r"^[A-Za-z_]\w*=", arg):
        return True
    return name in _TAKES_NUMBER and bool(re.match(r"^[\d.]+[smhd]?$|^0x[0-9a-f]+$", arg))


def shlex_split(value: str) -> list[str]:
    try:
        return shlex.split(value)
    except ValueError:
        return value.split()


def url_basename(url: str) -> str:
    try:
        return posixpath.basename(urlsplit(url).path) or "index.html"
    except ValueError:
        return "index.html"


# Per downloader: options naming the output file, options naming it from the URL, options whose value is
# something else (wget's `-o` is its log file), and whether it writes to stdout when told nothing.
_OUTPUT = {"curl": ({"o", "output"}, {"O", "remote-name"}, True),
           "wget": ({"O", "output-document"}, set(), False), "wget2": ({"O", "output-document"}, set(), False),
           "aria2c": ({"o", "out"}, set(), False), "axel": ({"o", "output"}, set(), False)}


def download_outputs(name: str, args: tuple[str, ...], url: str) -> tuple[list[str], bool]:
    """The files a downloader writes, and whether it writes to stdout."""
    named, remote, to_stdout = _OUTPUT.get(name, (set(), set(), name not in ("lwp-download",)))
    files: list[str] = []
    i = 0
    while i < len(args):
        option, attached = _option(args[i], named | remote)
        if option in named:
            target = attached if attached is not None else (args[i + 1] if i + 1 < len(args) else "")
            i += 0 if attached is not None else 1
            to_stdout = target in ("-", "/dev/stdout")
            files += [] if to_stdout or not target else [target]
        elif option in remote:
            files.append(url_basename(url))
            to_stdout = False
        i += 1
    if not files and not to_stdout:
        files.append(url_basename(url))
    return files, to_stdout


def _option(arg: str, known: set[str]) -> tuple[str | None, str | None]:
    """`-o f`/`-of` -> (o, f|None); `--output=f` -> (output, f); combined `-fsSLo` -> (o, None)."""
    if arg.startswith("--"):
        key, eq, value = arg[2:].partition("=")
        return key, value if eq else None
    if arg.startswith("-") and len(arg) > 1:
        letters = arg[1:]
        for k, letter in enumerate(letters):
            if letter in known:
                return letter, letters[k + 1:] or None
    return None, None
