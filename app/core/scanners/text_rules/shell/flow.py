"""Follow downloaded bytes through a shell script to the command that runs them.

A script is walked in order, as bash would run it (every branch and function body taken: a reader
cannot know which runs). Downloaded bytes are followed through pipes, ``tee``, redirects, copies,
variables, command and process substitution, here-strings and ``env``/``sudo`` wrappers; they reach
execution when a shell, Python or another interpreter reads them as its program, or a path they were
saved to is run. A repo fetched from the Hub (``hf download``, ``git clone``) and then installed or run
is recorded as Hub code. Nothing is run: this reads the syntax tree only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node

from app.core.scanners.text_rules.shell import commands as cmd
from app.core.scanners.text_rules.shell.chunks import chunks
from app.core.scanners.text_rules.shell.runs import Command
from app.core.scanners.text_rules.shell.syntax import command_runs, parse, row, text
from app.core.scanners.text_rules.shell.values import Execution, HubCode, Input, Taint, Val, norm

MAX_DEPTH = 4  # scripts inside strings inside scripts (`bash -c "..."`, `eval`, here-documents)
MAX_STEPS = 200_000  # nodes walked per file (~0.6 s): bounds hostile size
MAX_NESTING = 100  # syntax nodes inside one another (`$($($(...)))`): bounds the walk's recursion


@dataclass
class Flow:
    executions: list[Execution] = field(default_factory=list)
    hub: list[HubCode] = field(default_factory=list)
    variables: dict[str, Val] = field(default_factory=dict)
    files: dict[str, Taint] = field(default_factory=dict)
    hub_dirs: dict[str, HubCode] = field(default_factory=dict)
    functions: dict[str, tuple[Node, bytes, int]] = field(default_factory=dict)  # body, its source, its base row
    aliases: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    extracted: dict[str, Taint] = field(default_factory=dict)  # archive stem -> its download
    steps: int = 0
    truncated: bool = False  # a bound stopped the walk: the rest of the script was not followed

    def run_script(self, script: str, first_row: int = 0, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            return
        if depth == 0:  # what an archive unpacked is known within one program (a fence, a script), not after
            self.extracted = {}
        for offset, chunk in chunks(script):  # statement runs: parse cost stays linear (shell/chunks)
            root, source = parse(chunk)
            _Walker(self, first_row + offset, depth, source).statement(root, None)


class _Walker:
    def __init__(self, flow: Flow, first_row: int, depth: int, source: bytes) -> None:
        self.flow, self.base, self.depth, self.source = flow, first_row, depth, source
        self.nesting = 0

    # -- statements ---------------------------------------------------------------------------
    def statement(self, node: Node, stdin: Input) -> Input:
        """Walk one statement; returns what it writes to stdout (a taint, or nothing known)."""
        self.flow.steps += 1
        if self.flow.steps > MAX_STEPS or self.nesting > MAX_NESTING:
            self.flow.truncated = True
            return None
        self.nesting += 1
        try:
            return self._statement(node, stdin)
        finally:
            self.nesting -= 1

    def _statement(self, node: Node, stdin: Input) -> Input:
        kind = node.type
        if kind == "command":
            return self.command(node, stdin)
        if kind == "pipeline":
            for stage in node.named_children:
                stdin = self.statement(stage, stdin)
            return stdin
        if kind == "redirected_statement":
            return self.redirected(node, stdin)
        if kind == "variable_assignment":
            self.assign(node)
            return None
        if kind == "function_definition":
            name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
            if name is not None and body is not None:
                self.flow.functions[text(name)] = (body, self.source, self.base)
        out: Input = None
        for child in node.named_children:
            out = self.statement(child, stdin if kind in ("subshell", "compound_statement") else None)
        return out

    def redirected(self, node: Node, stdin: Input) -> Input:
        body = node.child_by_field_name("body") or (node.named_children[0] if node.named_children else None)
        redirects = [c for c in node.named_children if c is not body]
        for redirect in redirects:
            stdin = self.input_of(redirect, stdin)
        out = self.statement(body, stdin) if body is not None else None
        for redirect in redirects:  # bash gives output redirects to the last command (tree-sitter-bash #345)
            for target in self.output_targets(redirect):
                if isinstance(out, Taint):
                    self.flow.files[norm(target)] = out
        return out if not any(self.output_targets(r) for r in redirects) else None

    def input_of(self, redirect: Node, stdin: Input) -> Input:
        if redirect.type == "herestring_redirect":
            value = self.value_of_children(redirect)
            return value.taint or value.text
        if redirect.type == "heredoc_redirect":
            body = next((c for c in redirect.named_children if c.type == "heredoc_body"), None)
            if body is None:
                return stdin
            # An unquoted delimiter expands the body: `$(curl ...)` inside it is the download itself.
            expanded = [self.value(c) for c in body.named_children if c.type != "heredoc_content"]
            return next((v.taint for v in expanded if v.taint), None) or text(body)
        if redirect.type == "file_redirect" and text(redirect).lstrip("0123456789").startswith("<"):
            for child in redirect.named_children:
                value = self.value(child)
                return value.taint or self.flow.files.get(norm(value.text)) or stdin
        return stdin

    def output_targets(self, redirect: Node) -> list[str]:
        if redirect.type != "file_redirect" or text(redirect).lstrip("0123456789&").startswith("<"):
            return []
        return [self.value(c).text for c in redirect.named_children if c.type != "file_descriptor"][:1]

    def assign(self, node: Node) -> None:
        name = node.child_by_field_name("name") or (node.named_children[0] if node.named_children else None)
        value = node.child_by_field_name("value")
        if name is not None:
            self.flow.variables[text(name)] = self.value(value) if value is not None else Val("")

    # -- commands -----------------------------------------------------------------------------
    def command(self, node: Node, stdin: Input) -> Input:
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.assign(child)
            elif child.type in ("herestring_redirect", "heredoc_redirect", "file_redirect"):
                stdin = self.input_of(child, stdin)
        out: Input = None
        for k, words in enumerate(command_runs(node, self.source)):
            out = self.run([self.value(w) for w in words], stdin if k == 0 else None, row(words[0]))
        return out

    def run(self, argv: list[Val], stdin: Input, at: int) -> Input:
        if argv and argv[0].text in self.flow.aliases:  # `shopt -s expand_aliases` then `alias get='curl'`
            argv = [Val(w) for w in cmd.shlex_split(self.flow.aliases[argv[0].text])] + argv[1:]
        if argv and argv[0].text == "alias":
            for word in argv[1:]:
                name, eq, value = word.text.partition("=")
                if eq:
                    self.flow.aliases[name] = value
            return None
        if argv and argv[0].text in self.flow.functions:
            body, source, base = self.flow.functions[argv[0].text]
            callee = self if source is self.source else _Walker(self.flow, base, self.depth, source)
            callee.nesting = self.nesting
            return callee.call(body, argv[1:], stdin)
        core = cmd.core_command([v.text for v in argv])
        if core is None:
            return None
        vals = argv[len(argv) - len(core.args):] if len(core.args) < len(argv) else [Val(a) for a in core.args]
        if core.via_xargs and isinstance(stdin, Taint):  # xargs makes what it reads the command's arguments
            vals, stdin = [*vals, Val("<stdin>", stdin)], None
        return Command(self, core, vals, stdin, at).run()

    def call(self, body: Node, args: list[Val], stdin: Input) -> Input:
        """A shell function runs its body with the call's arguments and stdin."""
        saved = {k: self.flow.variables.get(k) for k in ("@", "*", "1", "2", "3")}
        taint = next((a.taint for a in args if a.taint), None)
        joined = Val(" ".join(a.text for a in args), taint)
        self.flow.variables.update({"@": joined, "*": joined, **{str(i + 1): a for i, a in enumerate(args[:3])}})
        try:
            return self.statement(body, stdin)
        finally:
            for key, value in saved.items():
                if value is None:
                    self.flow.variables.pop(key, None)
                else:
                    self.flow.variables[key] = value

    # -- words --------------------------------------------------------------------------------
    def value(self, node: Node) -> Val:
        """A word's text as bash would expand it, with the taint of any substitution inside it."""
        if self.nesting > MAX_NESTING:  # words nest through strings and substitutions too
            self.flow.truncated = True
            return Val(text(node))
        self.nesting += 1
        try:
            return self._value(node)
        finally:
            self.nesting -= 1

    def _value(self, node: Node) -> Val:
        kind = node.type
        if kind in ("word", "number"):
            return Val(re.sub(r"\\(.)", r"\1", text(node)))
        if kind == "raw_string":
            return Val(text(node)[1:-1])
        if kind == "ansi_c_string":
            return Val(text(node)[2:-1])
        if kind == "simple_expansion" or kind == "expansion":
            return self.expansion(node)
        if kind in ("command_substitution", "process_substitution"):
            out: Input = None
            for child in node.named_children:
                out = self.statement(child, None)
            taint = out if isinstance(out, Taint) else None
            return Val(text(node), taint, path=kind == "process_substitution")
        if kind == "command_name":
            return self.value_of_children(node)
        if kind in ("string", "concatenation", "translated_string"):
            return self.value_of_children(node, quoted=kind == "string")
        return Val(text(node))

    def value_of_children(self, node: Node, quoted: bool = False) -> Val:
        parts = [self.value(c) for c in node.named_children]
        if quoted and not parts:
            return Val(text(node)[1:-1])
        if quoted:  # literal text between expansions is not a named child: keep the string's own text
            joined = text(node)[1:-1]
            for child, part in zip(node.named_children, parts, strict=True):
                if child.type != "string_content":
                    joined = joined.replace(text(child), part.text, 1)
            return Val(joined, next((p.taint for p in parts if p.taint), None))
        return Val("".join(p.text for p in parts), next((p.taint for p in parts if p.taint), None),
                    any(p.path for p in parts))

    def expansion(self, node: Node) -> Val:
        raw = text(node)
        match = re.match(r"^\$\{?#?!?([A-Za-z_]\w*|\d|@|\*)(?:(:?[-=+?])(.*?))?\}?$", raw, re.S)
        if not match:
            return Val(raw)
        known = self.flow.variables.get(match.group(1))
        if known is not None:
            return known
        if match.group(2) in (":-", "-", ":=", "=") and match.group(3) is not None:
            return Val(match.group(3))
        return Val(raw)

    def report(self, at: int, taint: Taint, why: str) -> None:
        self.flow.executions.append(Execution(self.base + at, taint.url, why, self.base + taint.row,
                                             taint.urls or (taint.url,)))

    def nested(self, script: str, at: int) -> None:
        self.flow.run_script(script, self.base + at, self.depth + 1)
