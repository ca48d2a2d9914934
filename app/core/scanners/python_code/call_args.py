"""What the arguments of a call say, read from the AST: whether a load is the safe kind
(``weights_only=True``, no ``allow_pickle``, a safe YAML loader), and where a write goes (a path
outside the model directory, a place whose contents run later on their own). ``effects`` asks these
questions of every call it walks; a keyword's value is ``names.kwarg``.
"""

from __future__ import annotations

import ast
import re

from app.core.scanners.python_code import names as pn
from app.core.scanners.python_code.names import Names, kwarg, literal_str

# Places whose contents run later on their own: shell start-up, Python start-up, cron, services.
PERSISTENCE = re.compile(
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


def safe_load_call(node: ast.Call, func: str) -> bool:
    """Torch loads with weights_only=True, numpy loads without allow_pickle, yaml loads with SafeLoader."""
    if func == "torch.load":
        flag = kwarg(node, "weights_only")
        return isinstance(flag, ast.Constant) and flag.value is True
    if func == "numpy.load":
        flag = kwarg(node, "allow_pickle")
        return not (isinstance(flag, ast.Constant) and flag.value is True)
    if func == "yaml.load":
        loader = kwarg(node, "Loader") or (node.args[1] if len(node.args) > 1 else None)
        return loader is not None and "Safe" in ast.unparse(loader)
    return False


def write_target(node: ast.Call, func: str) -> ast.expr | None:
    """The path expression a call writes to, or None when the call does not write a file."""
    if func in ("open", "io.open", "codecs.open"):
        mode = node.args[1] if len(node.args) > 1 else kwarg(node, "mode")
        text = literal_str(mode) if mode is not None else "r"
        writes = text is None or any(c in text for c in "wax+")
        return node.args[0] if writes and node.args else None
    if func in _COPY_FUNCS and len(node.args) >= 2:
        return node.args[1]
    if isinstance(node.func, ast.Attribute) and node.func.attr in _WRITE_METHODS:
        return node.func.value
    return None


def outside_path(node: ast.AST, names: Names) -> str | None:
    """Why a path expression points outside the model directory (home, site-packages, /etc...)."""
    for sub in ast.walk(node):
        text = literal_str(sub)
        if text and PERSISTENCE.search(text):
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
