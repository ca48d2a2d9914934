"""The shell programs a text file holds, as the tool that runs them would see them.

A shell script is its whole text; a model card holds its shell in fenced code blocks (a console block's
`$ ` prompts removed); a Dockerfile in its `RUN` instructions (`ENV`/`ARG` set variables); a Makefile in
its recipe lines; CI and launcher YAML in `run:`/`script:`/`command:` strings. Each program keeps the
file's line numbers: lines that are not shell are blanked, not removed.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Iterator

import yaml

Program = tuple[int, str]  # (0-based first row in the file, script text)

_SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh", ".sbatch", ".slurm", ".pbs", ".lsf", ".command", ".envrc")
_SHEBANG = re.compile(r"^#!\s*(?:/usr)?(?:/local)?/bin/(?:env\s+(?:-\S+\s+)*)?(?:ba|z|da|k|mk|a)?sh\b")
_FENCE = re.compile(r"^\s*(?P<mark>```+|~~~+)\s*(?P<info>[\w+-]*)")
_SHELL_FENCES = frozenset({"", "bash", "sh", "shell", "console", "zsh", "terminal", "shell-session", "sh-session",
                           "shellsession", "text", "cmd", "bat", "ksh", "dockerfile", "docker", "makefile", "make"})
_PROMPT = re.compile(r"^\s*(?:\(\S+\)\s*)?[$%]\s+")
_DOCKER_INSTR = re.compile(r"^\s*(?P<op>RUN|ENV|ARG|ADD)\s+(?:--\S+\s+)*(?P<rest>.*)$", re.I | re.S)
_YAML_SHELL_KEYS = frozenset({"run", "script", "before_script", "after_script", "command", "commands", "entrypoint",
                              "args", "cmd", "setup", "pre_build", "build", "install", "post_start", "exec"})
MAX_YAML_BYTES = 1 << 20  # YAML read for shell strings (the text limit bounds the file; this bounds parsing)
MAX_YAML_NODES = 100_000  # nodes visited: an alias is one node however often it is used


# tree-sitter-bash's error recovery is superlinear on lines dense with redirect and pipe operators (a
# prompt template's `<|patch|>` x 4,000 took 1.4 s for 29 KB): no command line has this many, so such a
# line is blanked (the line idioms still read it) rather than parsed. Deterministic, unlike a time budget.
MAX_OPERATORS_PER_LINE = 12
_OPERATORS = re.compile(r"[<>|]")


def programs(path: str, text: str) -> list[Program]:
    """The file's shell programs, lines dense with operators blanked (see ``MAX_OPERATORS_PER_LINE``)."""
    return [(first, _tame(script)) for first, script in _programs(path, text)]


def _tame(script: str) -> str:
    if len(_OPERATORS.findall(script)) <= MAX_OPERATORS_PER_LINE:
        return script
    return "\n".join("" if len(_OPERATORS.findall(line)) > MAX_OPERATORS_PER_LINE else line
                     for line in script.split("\n"))


def _programs(path: str, text: str) -> list[Program]:
    kind = _kind(path)
    if kind == "markdown":
        return _markdown(text)
    if kind == "dockerfile":
        return [(0, _dockerfile(text))]
    if kind == "make":
        return [(0, _recipes(text))]
    if kind == "yaml":
        return list(_yaml_strings(text))
    base = posixpath.basename(path).lower()
    if kind == "shell" or _SHEBANG.match(text) or ("." not in base and _looks_like_commands(text)):
        return [(0, text)]
    return []


def reads_as_shell(path: str) -> bool:
    """Whether ``programs`` reads the file's shell by its name alone (whatever its text)."""
    return _kind(path) is not None


def _kind(path: str) -> str | None:
    base = posixpath.basename(path).lower()
    if base.endswith((".md", ".markdown", ".mdx")) or base.startswith("readme"):
        return "markdown"
    if base.startswith(("dockerfile", "containerfile")) or base.endswith((".dockerfile", ".containerfile")):
        return "dockerfile"
    if base in ("makefile", "gnumakefile", "justfile") or base.endswith(".mk"):
        return "make"
    if base.endswith((".yaml", ".yml")):
        return "yaml"
    return "shell" if base.endswith(_SHELL_SUFFIXES) else None


def _looks_like_commands(text: str) -> bool:
    """An extensionless file (`install`, `run`) whose lines read as shell commands."""
    lines = [ln.strip() for ln in text.splitlines()[:50] if ln.strip() and not ln.lstrip().startswith("#")]
    commands = re.compile(r"^(?:sudo\s+)?(?:curl|wget|pip3?|uv|conda|apt(?:-get)?|export|cd|git|bash|sh|python3?|"
                          r"chmod|docker|make|mkdir|source)\b")
    return bool(lines) and sum(bool(commands.match(ln)) for ln in lines) * 2 >= len(lines)


def _markdown(text: str) -> list[Program]:
    """Each shell fence as its own program (variables carry over: one walk reads them in order); parsing
    fence by fence keeps tree-sitter's error recovery local to a block that is not shell after all."""
    blocks: list[Program] = []
    fence: str | None = None
    shell, first = False, 0
    lines: list[str] = []
    for row, line in enumerate(text.splitlines()):
        match = _FENCE.match(line)
        if fence is None and match:
            fence, shell, first, lines = match.group("mark"), match.group("info").lower() in _SHELL_FENCES, row + 1, []
        elif fence is not None and line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
            if shell and lines:
                blocks.append((first, "\n".join(lines)))
            fence = None
        elif fence is not None:
            lines.append(_PROMPT.sub("", line))
    return blocks


def _dockerfile(text: str) -> str:
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        block = [lines[i]]
        while block[-1].rstrip().endswith("\\") and i + len(block) < len(lines):
            block.append(lines[i + len(block)])
        out += _docker_instruction(block)
        i += len(block)
    return "\n".join(out)


def _docker_instruction(block: list[str]) -> list[str]:
    match = _DOCKER_INSTR.match("\n".join(block))
    if not match:
        return [""] * len(block)
    op, rest = match.group("op").upper(), match.group("rest")
    if op == "RUN":
        exec_form = _exec_form(rest)
        body = exec_form if exec_form is not None else rest
    elif op == "ADD":
        body = _docker_add(rest)
    else:  # ENV a=b c=d, ENV a b, ARG a=b: variables later RUN lines expand
        body = _docker_assignment(rest)
    lines = body.split("\n")
    return lines + [""] * (len(block) - len(lines))


def _docker_add(rest: str) -> str:
    """`ADD URL... DEST` (shell or JSON form) as the download it is: one `curl -o` per URL source."""
    exec_form = _exec_form(rest)
    words = shlex_words(exec_form if exec_form is not None else rest.replace("\\\n", " "))
    if len(words) < 2:
        return ""
    *sources, dest = words
    urls = [src for src in sources if re.match(r"^(?:(?:https?|ftp)://|\$)", src)]  # `${URL}`: an ARG
    targets = [dest + posixpath.basename(url) if dest.endswith("/") else dest for url in urls]
    quoted = [f'"{u}"' if u.startswith("$") else shlex.quote(u) for u in urls]  # a variable must still expand
    return " ; ".join(f"curl -o {shlex.quote(t)} {u}" for t, u in zip(targets, quoted, strict=True))


def shlex_words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _docker_assignment(rest: str) -> str:
    words = rest.split(None, 1)
    if not words:
        return ""
    if "=" in words[0] or len(words) == 1:
        return f"export {rest}"
    return f"export {words[0]}={shlex.quote(words[1].strip())}"


def _exec_form(rest: str) -> str | None:
    """`RUN ["sh", "-c", "curl ... | sh"]`: the argv as a shell line."""
    if not rest.lstrip().startswith("["):
        return None
    try:
        argv = json.loads(rest.replace("\\\n", " "))
    except ValueError:
        return None
    return shlex.join(str(a) for a in argv) if isinstance(argv, list) else None


_MAKE_ASSIGN = re.compile(r"^(?:export\s+|override\s+)?(?P<name>[A-Za-z_][\w.-]*)\s*[:?+!]?=\s*(?P<value>.*)$")
_MAKE_REF = re.compile(r"\$[({](?P<name>[A-Za-z_][\w.-]*)[)}]")


def _recipes(text: str) -> str:
    """Recipe lines (tab-indented) as make hands them to the shell: `@`/`-`/`+` prefixes removed, make's
    variables expanded (`$(SHELL)` is /bin/sh unless set) and `$$` as the shell's `$`."""
    variables = {"SHELL": "/bin/sh", "MAKE": "make"}
    out = []
    for line in text.splitlines():
        assign = _MAKE_ASSIGN.match(line)
        if line.startswith("\t"):
            recipe = re.sub(r"^\t[@+-]*", "", line)
            recipe = _MAKE_REF.sub(lambda m: variables.get(m.group("name"), m.group(0)), recipe)
            out.append(recipe.replace("$$", "$"))
        else:
            if assign:
                variables[assign.group("name")] = assign.group("value").strip()
            out.append("")
    return "\n".join(out)


def _yaml_strings(text: str) -> Iterator[Program]:
    """Shell strings of CI and launcher YAML: GitHub Actions `run:`, GitLab `script:`, k8s `command:`."""
    if len(text) > MAX_YAML_BYTES:
        return
    try:
        documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return
    stack: list[yaml.Node] = [d for d in documents if d is not None]
    seen: set[int] = set()
    while stack and len(seen) < MAX_YAML_NODES:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and str(key.value).lower() in _YAML_SHELL_KEYS:
                    yield from _shell_values(value)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def _shell_values(node: yaml.Node) -> Iterator[Program]:
    if isinstance(node, yaml.ScalarNode) and isinstance(node.value, str):
        block = node.style in ("|", ">")
        yield node.start_mark.line + (1 if block else 0), node.value
    elif isinstance(node, yaml.SequenceNode):
        items = [n.value for n in node.value if isinstance(n, yaml.ScalarNode)]
        if len(items) >= 2 and posixpath.basename(items[0]) in ("sh", "bash", "zsh") and "-c" in items[1:3]:
            yield node.start_mark.line, shlex.join(items)  # command: [sh, -c, "..."]
        else:
            for item in node.value:
                if isinstance(item, yaml.ScalarNode):
                    yield item.start_mark.line, str(item.value)
