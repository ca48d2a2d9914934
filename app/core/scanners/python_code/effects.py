"""What Python source would do when imported or run, found by walking its AST (never executing it).

Each call of interest becomes an ``Observation``; ``load_time`` marks code that runs on import or
while a runtime loads the classes (see ``load_time``), as opposed to later method calls. Call
targets resolve through imports, single assignments and folded constants (``names``,
``constants``); calls into the repo's other modules carry what those functions do
(``ModuleContext.helpers``).
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from app.core.scanners.python_code import names as pn
from app.core.scanners.python_code.call_args import PERSISTENCE, outside_path, safe_load_call, write_target
from app.core.scanners.python_code.load_time import load_time_functions, reachable_from
from app.core.scanners.python_code.modern_syntax import parse_module
from app.core.scanners.python_code.names import Names, is_computed_string, kwarg, literal_str
from app.core.scanners.python_code.taint import Taint, label_of_args

BLOB_MIN_CHARS = 256
MAX_INNER_DEPTH = 3  # exec("...") literals are parsed and walked this deep
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})+")
_INTERPRETER = re.compile(r"^(?:(?:ba|da|z|k|c|tc|fi)?sh|env|python[\d.]*|pypy[\d.]*|perl|ruby|node|deno|bun|php|lua"
                          r"|powershell|pwsh|cmd(?:\.exe)?|osascript|busybox|xargs|nohup|sudo|exec)$")
# Environment variables that make the dynamic linker load a library into every new process.
_PRELOAD_VARS = {"LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"}
# The parameter through which transformers passes the repo being loaded: forwarding it is no new repo.
_OWN_REPO_PARAMS = {"pretrained_model_name_or_path", "self.name_or_path", "self.config.name_or_path",
                    "config.name_or_path", "config._name_or_path", "self.config._name_or_path"}


@dataclass(frozen=True)
class Observation:
    kind: str  # process, exec, exec-decoded, exec-fetched, network, foreign-repo, ...
    line: int
    load_time: bool
    detail: str
    fixed: bool = False  # what runs is a constant (a fixed program, literal code): no data flows into it
    why: str = ""  # why it counts as load time ("called from XModel.__init__")


Summary = Mapping[str, tuple[Observation, ...]]  # function or class name -> what calling it does


@dataclass(frozen=True)
class ModuleContext:
    """What the module's repo adds: shipped extension modules, install-time code, helper modules."""

    own_repo: str | None = None
    native_modules: frozenset[str] = frozenset()  # importable names of shipped .so/.pyd/.dylib files
    install_time: bool = False  # setup.py or an in-tree build backend: pip runs every function
    helpers: Mapping[str, Summary] = field(default_factory=dict)  # import name (".helper") -> summary
    # (function pattern, why) a runtime calls while loading, from the loader map (`EndpointHandler.__call__`).
    runtime_roots: tuple[tuple[str, str], ...] = ()


def analyse(source: bytes | str, own_repo: str | None, context: ModuleContext | None = None) -> list[Observation]:
    """Observations for one module. Raises SyntaxError/ValueError/RecursionError on bad source."""
    context = context or ModuleContext(own_repo)
    tree = parse_module(source)
    names = Names(tree)
    load_set = load_time_functions(tree, context.install_time, context.runtime_roots)
    walker = _Walker(names, context, Taint(tree, names), load_set=load_set)
    walker.visit(tree)
    return walker.found


def summarize(source: bytes | str, own_repo: str | None, native: frozenset[str] = frozenset()) -> Summary:
    """For each function and class of a helper module: what calling it does (with what it calls)."""
    tree = parse_module(source)
    names = Names(tree)
    context = ModuleContext(own_repo, native)
    everything = load_time_functions(tree, everything=True)
    walker = _Walker(names, context, Taint(tree, names), load_set=everything)
    walker.visit(tree)
    interesting = [o for o in walker.found if o.kind != "blob"]
    own: dict[ast.AST, tuple[Observation, ...]] = {}  # what each function's own lines do
    summary: dict[str, tuple[Observation, ...]] = {}
    for name, nodes in reachable_from(tree).items():
        hits: list[Observation] = []
        for node in nodes:
            if node not in own:
                first, last = getattr(node, "lineno", 0), getattr(node, "end_lineno", 0) or 0
                own[node] = tuple(o for o in interesting if first <= o.line <= last)
            hits.extend(own[node])
        if hits:
            summary[name] = tuple(dict.fromkeys(hits))
    return summary


class _Walker(ast.NodeVisitor):
    def __init__(self, names: Names, context: ModuleContext, taint: Taint, depth: int = 0,
                 line_offset: int = 0, load_time: bool = True, load_set: Mapping[ast.AST, str] | None = None) -> None:
        self.names, self.context, self.taint = names, context, taint
        self.own_repo = context.own_repo
        self.tainted = taint.in_scope(None)
        self.depth, self.line_offset = depth, line_offset
        self.load_time = self.base_load = load_time
        self.load_set = load_set or {}
        self.why = ""
        self.found: list[Observation] = []

    def add(self, kind: str, node: ast.AST, detail: str, fixed: bool = False) -> None:
        line = self.line_offset or getattr(node, "lineno", 0)
        self.found.append(Observation(kind, line, self.load_time, detail, fixed, self.why if self.load_time else ""))

    def _visit_scoped(self, body: list[ast.stmt], load_time: bool, scope: ast.AST | None = None,
                      why: str = "") -> None:
        saved, self.load_time = (self.load_time, self.why), load_time
        self.why = why or self.why
        saved_taint = self.tainted
        if scope is not None:
            self.tainted = self.taint.in_scope(scope)
        for stmt in body:
            self.visit(stmt)
        (self.load_time, self.why), self.tainted = saved, saved_taint

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for outer in (*node.decorator_list, *node.args.defaults, *node.args.kw_defaults):
            if outer is not None:
                self.visit(outer)  # evaluated when the def statement runs
        why = self.load_set.get(node)
        self._visit_scoped(node.body, self.base_load and why is not None, node, f"{node.name}: {why}" if why else "")

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        saved, self.load_time = (self.load_time, self.tainted), False
        self.tainted = self.taint.in_scope(node)
        self.generic_visit(node)
        self.load_time, self.tainted = saved

    def visit_If(self, node: ast.If) -> None:
        if _is_main_guard(node.test):
            self.visit(node.test)
            self._visit_scoped(node.body, False)
            self._visit_scoped(node.orelse, self.load_time)
            return
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if isinstance(value, str) and _looks_like_blob(value):
            self.add("blob", node, f"{len(value)}-character encoded blob")
        if isinstance(value, str) and value in _PRELOAD_VARS:
            self.add("native-code", node, f"sets {value}: the dynamic linker loads that library into processes")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._native_import(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        self._native_import(node, base)
        for alias in node.names:
            self._native_import(node, f"{base}.{alias.name}" if base else alias.name)

    def _native_import(self, node: ast.AST, module: str) -> None:
        last = module.rsplit(".", 1)[-1]
        if last and last in self.context.native_modules:
            self.add("native-code", node, f"imports {module}, a shipped extension module (native code)", fixed=True)

    def visit_Call(self, node: ast.Call) -> None:
        func = self.names.qualname(node.func) or ""
        matched = False
        for check in (self._process, self._exec, self._import, self._network, self._deserialize,
                      self._native, self._write):
            if check(node, func):
                matched = True
                break
        hidden = self.names.hidden(node.func)
        if hidden and (matched or pn.is_exec(func) or pn.is_process(func)):
            self.add("obfuscation", node, f"call target {func} hidden ({hidden})")
        if self.load_time and func:
            self._helper_call(node, func)
        self.generic_visit(node)

    def _helper_call(self, node: ast.Call, func: str) -> None:
        """A call into another module of the repo, at load time, does what that function does."""
        for module, summary in self.context.helpers.items():
            if not func.startswith(module + "."):
                continue
            for obs in summary.get(func[len(module) + 1:], ()):
                self.add(obs.kind, node, f"{func}() -> {module.lstrip('.')}:{obs.line}: {obs.detail}", obs.fixed)

    def _process(self, node: ast.Call, func: str) -> bool:
        if not pn.is_process(func):
            return False
        label = label_of_args(node, self.names, self.tainted)
        kind = {"fetched": "process-fetched", "decoded": "process-decoded"}.get(label or "", "process")
        self.add(kind, node, _described(func), fixed=label is None and self._fixed_program(node))
        return True

    def _fixed_program(self, node: ast.Call) -> bool:
        """The program is a constant and no shell parses the rest: ``run(["ffmpeg", "-i", path])``."""
        shell = kwarg(node, "shell")
        if shell is not None and not (isinstance(shell, ast.Constant) and shell.value is False):
            return False
        first = node.args[0] if node.args else kwarg(node, "args")
        if isinstance(first, ast.Name):  # cmd = ["ffmpeg", ...]; run(cmd)
            first = self.names.constants.binding(first.id) or first
        rest: list[ast.expr] = []
        if isinstance(first, ast.List | ast.Tuple):
            rest = first.elts[1:]
            first = first.elts[0] if first.elts and not isinstance(first.elts[0], ast.Starred) else None
        program = self.names.constants.text(first) if first is not None else None
        if program is None:
            return False
        # ["sh", "-c", x], ["python", x]: an interpreter's arguments are code, fixed only if constant.
        name = posixpath.basename(str(program.value).split()[0]) if str(program.value).split() else ""
        if _INTERPRETER.match(name):
            return all(self.names.constants.fold(arg) is not None for arg in rest)
        return True

    def _exec(self, node: ast.Call, func: str) -> bool:
        if func not in pn.EXEC:
            return self._derived_exec(node, func)
        folded = self.names.constants.text(node.args[0]) if node.args else None
        if folded is not None:
            before = len(self.found)
            self._walk_inner(str(folded.value), node)
            if not folded.computed:
                return True
            if len(self.found) > before:  # the decoded code does something itself: it was hidden
                self.add("obfuscation", node, f"{func} of code hidden by encoding")
        label = label_of_args(node, self.names, self.tainted)
        if folded is not None:
            label = label or "decoded"
        self.add({"fetched": "exec-fetched", "decoded": "exec-decoded"}.get(label or "", "exec"), node, func)
        return True

    def _derived_exec(self, node: ast.Call, func: str) -> bool:
        """A library call that runs code (``timeit.timeit``, ``pdb.run``, ``loader.exec_module``): what
        its first argument does when that is literal code, and the call itself, whose other
        arguments (a path, a module) the walk cannot read as code."""
        if not pn.is_exec(func):
            return False
        folded = self.names.constants.text(node.args[0]) if node.args else None
        if folded is not None:
            self._walk_inner(str(folded.value), node)
        label = label_of_args(node, self.names, self.tainted)
        kind = {"fetched": "exec-fetched", "decoded": "exec-decoded"}.get(label or "", "exec")
        fixed = label is None and all(self.names.constants.fold(a) is not None for a in node.args)
        self.add(kind, node, _described(func), fixed)
        return True

    def _walk_inner(self, code: str, node: ast.Call) -> None:
        if self.depth >= MAX_INNER_DEPTH:
            self.add("exec", node, "deeply nested exec of literal code")
            return
        try:
            tree = parse_module(code)
        except (SyntaxError, ValueError):
            return  # Python would fail on it too
        names = Names(tree)
        inner = _Walker(names, self.context, Taint(tree, names, self.tainted), self.depth + 1,
                        getattr(node, "lineno", 0), self.load_time, load_time_functions(tree))
        inner.visit(tree)
        self.found.extend(inner.found)

    def _import(self, node: ast.Call, func: str) -> bool:
        if func in pn.DYNAMIC_IMPORT or func in ("getattr", "setattr"):
            computed = [a for a in node.args[:2] if is_computed_string(a, self.names) or self._hidden_name(a)]
            if computed:
                self.add("obfuscation", node, f"{func} with a computed name")
            if func in pn.DYNAMIC_IMPORT and node.args:
                module = self.names.constants.text(node.args[0])
                if module is not None:
                    self._native_import(node, str(module.value))
            return True
        return False

    def _hidden_name(self, node: ast.AST) -> bool:
        folded = self.names.constants.fold(node)
        return folded is not None and folded.computed and isinstance(folded.value, str)

    def _network(self, node: ast.Call, func: str) -> bool:
        if func in pn.HUB_DOWNLOAD or func.endswith(".from_pretrained"):
            self._foreign_repo(node, func)
            return True
        if pn.is_network(func):
            self.add("network", node, _described(func))
            return True
        return False

    def _foreign_repo(self, node: ast.Call, func: str) -> None:
        repo_arg = node.args[0] if node.args else kwarg(node, "repo_id", "pretrained_model_name_or_path")
        folded = self.names.constants.text(repo_arg) if repo_arg is not None else None
        repo = str(folded.value) if folded is not None else None
        remote = kwarg(node, "trust_remote_code")
        remote_value = self.names.constants.fold(remote) if remote is not None else None
        trusts = (isinstance(remote, ast.Constant) and remote.value is True) or (
            remote_value is not None and bool(remote_value.value))
        if repo and "/" in repo and repo != self.own_repo:
            kind = "foreign-remote-code" if trusts else "foreign-repo"
            self.add(kind, node, f"{func} of {repo}")
        elif trusts:
            self.add("foreign-repo", node, f"{func} with trust_remote_code=True")
        if repo_arg is not None and folded is None and not _forwards_own_repo(repo_arg):
            self.add("dynamic-repo", node, f"{func} of a repo id computed at run time "
                     f"({ast.unparse(repo_arg)[:80]}): which repo it loads cannot be vetted")
        if remote is not None and not isinstance(remote, ast.Constant) and not _forwards_flag(remote):
            self.add("dynamic-remote-code", node,
                     f"{func} with trust_remote_code={ast.unparse(remote)[:80]} decided at run time")

    def _deserialize(self, node: ast.Call, func: str) -> bool:
        if not pn.is_deserialize(func):
            return False
        if safe_load_call(node, func):
            return True
        label = label_of_args(node, self.names, self.tainted)
        self.add("exec-fetched" if label == "fetched" else "deserialize", node, _described(func))
        return True

    def _native(self, node: ast.Call, func: str) -> bool:
        if not pn.is_native(func):
            return False
        label = label_of_args(node, self.names, self.tainted)
        fixed = label is None and all(self.names.constants.text(a) is not None for a in node.args[:1])
        self.add("exec-fetched" if label == "fetched" else "native-code", node, _described(func), fixed)
        return True

    def _write(self, node: ast.Call, func: str) -> bool:
        target = write_target(node, func)
        if target is None:
            return False
        where = outside_path(target, self.names)
        if where:
            self.add("persistence" if PERSISTENCE.search(where) else "write-outside", node, where)
        return True


def _described(func: str) -> str:
    """The call target, with the primitive it reaches when that comes from the derived catalogue."""
    sink = pn.derived_sink(func)
    return f"{func} (reaches {sink})" if sink else func


def _forwards_own_repo(node: ast.AST) -> bool:
    """The repo id the loader was called with, passed on: ``super().from_pretrained(pretrained_model_name_or_path)``."""
    return ast.unparse(node) in _OWN_REPO_PARAMS


def _forwards_flag(node: ast.AST) -> bool:
    """The caller's own trust_remote_code choice, passed on unchanged."""
    return isinstance(node, ast.Name | ast.Attribute | ast.Call) and "trust_remote_code" in ast.unparse(node)


def _is_main_guard(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(literal_str(c) == "__main__" for c in test.comparators)
    )


def _looks_like_blob(value: str) -> bool:
    compact = "".join(value.split())
    if len(compact) < BLOB_MIN_CHARS:
        return False
    if _HEX.fullmatch(compact):
        return True
    mixed = any(c.isdigit() for c in compact) and any(c.isupper() for c in compact)
    return mixed and any(c.islower() for c in compact) and bool(_BASE64.fullmatch(compact))
