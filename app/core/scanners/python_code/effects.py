"""What Python source would do when imported or run, found by walking its AST (never executing it).

Each call of interest becomes an ``Observation``; ``load_time`` marks code that runs on import or
model construction (module and class bodies, ``__init__``), as opposed to later method calls.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from app.core.scanners.python_code import names as pn
from app.core.scanners.python_code.names import Names, is_computed_string, literal_str
from app.core.scanners.python_code.taint import Taint, label_of_args

LOAD_TIME_FUNCTIONS = {"__init__", "__new__", "__post_init__", "__init_subclass__", "__set_name__"}
BLOB_MIN_CHARS = 256
MAX_INNER_DEPTH = 3  # exec("...") literals are parsed and walked this deep
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})+")
# Places whose contents run later on their own: shell start-up, Python start-up, cron, services.
_PERSISTENCE = re.compile(
    r"\.bashrc|\.bash_profile|\.bash_login|(?:^|[/\\])\.profile$|\.zshrc|\.zprofile|site-packages"
    r"|dist-packages|sitecustomize|usercustomize|\.ssh(?:[/\\]|$)|^/etc/|crontab|/var/spool/cron"
    r"|LaunchAgents|LaunchDaemons|systemd/user|Start Menu|[/\\]autostart",
    re.IGNORECASE,
)
_ABSOLUTE = re.compile(r"^(?:/|~|[A-Za-z]:[\\/]|\\\\)")
_HARMLESS_PATHS = {"/dev/null", "/dev/stdout", "/dev/stderr"}
_WRITE_METHODS = {"write_text", "write_bytes", "symlink_to", "hardlink_to", "touch"}
_COPY_FUNCS = {"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree", "shutil.move",
               "os.rename", "os.replace", "os.symlink", "os.link"}


@dataclass(frozen=True)
class Observation:
    kind: str  # process, exec, exec-decoded, exec-fetched, network, foreign-repo, ...
    line: int
    load_time: bool
    detail: str


def analyse(source: bytes | str, own_repo: str | None) -> list[Observation]:
    """Observations for one module. Raises SyntaxError/ValueError/RecursionError on bad source."""
    tree = ast.parse(source)
    names = Names(tree)
    walker = _Walker(names, own_repo, Taint(tree, names))
    walker.visit(tree)
    return walker.found


class _Walker(ast.NodeVisitor):
    def __init__(self, names: Names, own_repo: str | None, taint: Taint, depth: int = 0,
                 line_offset: int = 0, load_time: bool = True) -> None:
        self.names, self.own_repo, self.taint = names, own_repo, taint
        self.tainted = taint.in_scope(None)
        self.depth, self.line_offset = depth, line_offset
        self.load_time = load_time
        self.found: list[Observation] = []

    def add(self, kind: str, node: ast.AST, detail: str) -> None:
        line = self.line_offset or getattr(node, "lineno", 0)
        self.found.append(Observation(kind, line, self.load_time, detail))

    def _visit_scoped(self, body: list[ast.stmt], load_time: bool, scope: ast.AST | None = None) -> None:
        saved, self.load_time = self.load_time, load_time
        saved_taint = self.tainted
        if scope is not None:
            self.tainted = self.taint.in_scope(scope)
        for stmt in body:
            self.visit(stmt)
        self.load_time, self.tainted = saved, saved_taint

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for outer in (*node.decorator_list, *node.args.defaults, *node.args.kw_defaults):
            if outer is not None:
                self.visit(outer)  # evaluated when the def statement runs
        self._visit_scoped(node.body, self.load_time and node.name in LOAD_TIME_FUNCTIONS, node)

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

    def visit_Call(self, node: ast.Call) -> None:
        func = self.names.qualname(node.func) or ""
        for check in (self._process, self._exec, self._import, self._network, self._deserialize,
                      self._native, self._write):
            if check(node, func):
                break
        self.generic_visit(node)

    def _process(self, node: ast.Call, func: str) -> bool:
        if not pn.is_process(func):
            return False
        label = label_of_args(node, self.names, self.tainted)
        kind = {"fetched": "process-fetched", "decoded": "process-decoded"}.get(label or "", "process")
        self.add(kind, node, func)
        return True

    def _exec(self, node: ast.Call, func: str) -> bool:
        if func not in pn.EXEC:
            return False
        code = literal_str(node.args[0]) if node.args else None
        if code is not None:
            self._walk_inner(code, node)
            return True
        label = label_of_args(node, self.names, self.tainted)
        self.add({"fetched": "exec-fetched", "decoded": "exec-decoded"}.get(label or "", "exec"), node, func)
        return True

    def _walk_inner(self, code: str, node: ast.Call) -> None:
        if self.depth >= MAX_INNER_DEPTH:
            self.add("exec", node, "deeply nested exec of literal code")
            return
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            return  # Python would fail on it too
        names = Names(tree)
        inner = _Walker(names, self.own_repo, Taint(tree, names, self.tainted), self.depth + 1,
                        getattr(node, "lineno", 0), self.load_time)
        inner.visit(tree)
        self.found.extend(inner.found)

    def _import(self, node: ast.Call, func: str) -> bool:
        if func in pn.DYNAMIC_IMPORT or func in ("getattr", "setattr"):
            computed = [a for a in node.args[:2] if is_computed_string(a, self.names)]
            if computed:
                self.add("obfuscation", node, f"{func} with a computed name")
            return True
        return False

    def _network(self, node: ast.Call, func: str) -> bool:
        if pn.is_network(func):
            self.add("network", node, func)
            return True
        if func in pn.HUB_DOWNLOAD or func.endswith(".from_pretrained"):
            self._foreign_repo(node, func)
            return True
        return False

    def _foreign_repo(self, node: ast.Call, func: str) -> None:
        repo_arg = node.args[0] if node.args else _kwarg(node, "repo_id", "pretrained_model_name_or_path")
        repo = literal_str(repo_arg) if repo_arg is not None else None
        remote = _kwarg(node, "trust_remote_code")
        trusts = isinstance(remote, ast.Constant) and remote.value is True
        if repo and "/" in repo and repo != self.own_repo:
            kind = "foreign-remote-code" if trusts else "foreign-repo"
            self.add(kind, node, f"{func} of {repo}")
        elif trusts:
            self.add("foreign-repo", node, f"{func} with trust_remote_code=True")

    def _deserialize(self, node: ast.Call, func: str) -> bool:
        if func not in pn.DESERIALIZE:
            return False
        if _safe_load_call(node, func):
            return True
        label = label_of_args(node, self.names, self.tainted)
        self.add("exec-fetched" if label == "fetched" else "deserialize", node, func)
        return True

    def _native(self, node: ast.Call, func: str) -> bool:
        if func not in pn.NATIVE_CODE:
            return False
        label = label_of_args(node, self.names, self.tainted)
        self.add("exec-fetched" if label == "fetched" else "native-code", node, func)
        return True

    def _write(self, node: ast.Call, func: str) -> bool:
        target = _write_target(node, func)
        if target is None:
            return False
        where = _outside_path(target, self.names)
        if where:
            self.add("persistence" if _PERSISTENCE.search(where) else "write-outside", node, where)
        return True


def _kwarg(node: ast.Call, *keys: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg in keys), None)


def _safe_load_call(node: ast.Call, func: str) -> bool:
    """Torch loads with weights_only=True, numpy loads without allow_pickle, yaml loads with SafeLoader."""
    if func == "torch.load":
        flag = _kwarg(node, "weights_only")
        return isinstance(flag, ast.Constant) and flag.value is True
    if func == "numpy.load":
        flag = _kwarg(node, "allow_pickle")
        return not (isinstance(flag, ast.Constant) and flag.value is True)
    if func == "yaml.load":
        loader = _kwarg(node, "Loader") or (node.args[1] if len(node.args) > 1 else None)
        return loader is not None and "Safe" in ast.unparse(loader)
    return False


def _write_target(node: ast.Call, func: str) -> ast.expr | None:
    """The path expression a call writes to, or None when the call does not write a file."""
    if func in ("open", "io.open", "codecs.open"):
        mode = node.args[1] if len(node.args) > 1 else _kwarg(node, "mode")
        text = literal_str(mode) if mode is not None else "r"
        writes = text is None or any(c in text for c in "wax+")
        return node.args[0] if writes and node.args else None
    if func in _COPY_FUNCS and len(node.args) >= 2:
        return node.args[1]
    if isinstance(node.func, ast.Attribute) and node.func.attr in _WRITE_METHODS:
        return node.func.value
    return None


def _outside_path(node: ast.AST, names: Names) -> str | None:
    """Why a path expression points outside the model directory (home, site-packages, /etc...)."""
    for sub in ast.walk(node):
        text = literal_str(sub)
        if text and _PERSISTENCE.search(text):
            return text[:120]
        if isinstance(sub, ast.Call | ast.Attribute | ast.Name):
            name = names.qualname(sub.func if isinstance(sub, ast.Call) else sub)
            if name in pn.HOME_OR_SITE or (name or "").endswith("Path.home"):
                return ast.unparse(node)[:120]
    root = _path_root(node)
    if root and root not in _HARMLESS_PATHS and _ABSOLUTE.match(root):
        return root[:120]
    return None


def _path_root(node: ast.AST) -> str | None:
    """The literal a path expression starts with: "/etc" in f"/etc/{x}", os.path.join("/etc", x)..."""
    for _ in range(8):
        if isinstance(node, ast.JoinedStr):
            node = node.values[0] if node.values else node
        elif isinstance(node, ast.BinOp):
            node = node.left
        elif isinstance(node, ast.Call) and node.args:
            node = node.args[0]
        else:
            break
    return literal_str(node)


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
