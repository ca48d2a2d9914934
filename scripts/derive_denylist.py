"""Derive hfvet's dangerous-callable catalogue from library source (issue 11, item 4).

How the list is derived
-----------------------
1. **Sinks.** ``SINKS`` below names the primitives a pickle load must never reach, each with a
   category: code execution (``eval``/``exec``, code and function objects), code compilation,
   process creation (``os.system``/``exec*``/``spawn*``/``fork``, ``subprocess``, ``pty``), file
   writes (``open`` in a w/a/x/+ mode, ``os.remove``/``rename``/``mkdir``..., ``os.open`` with write
   flags), dynamic import (``__import__``, ``importlib``, ``_imp``), network (sockets, DNS, the
   stdlib clients), native code (``ctypes``/``cffi`` library loads) and deserialization re-entry
   (``pickle``/``marshal``/``dill``/``cloudpickle`` loads).
2. **Call graph.** Every module of a source tree is parsed with ``ast`` (never imported). A node
   is a module-level function, a class or a method; its edges are the calls in its body, resolved
   through the module's imports (function-local ones included), ``from m import *``, module-level
   aliases, ``self``/``cls``/``super()`` method lookup along the resolved bases, and, for a method
   called on an object whose type the AST cannot tell, every same-named method of the module's own
   classes (an over-approximation kept inside one module). A sink passed as a value
   (``map(os.unlink, ...)``, ``target=os.system``) is an edge too. A class's edges are the methods
   a load can run on it: ``__new__``/``__init__`` (a call), ``__setstate__`` (BUILD), ``__del__``.
   A module's top-level statements (minus its ``__main__`` block) form a node named after the
   module: what importing it runs. Not edges: ``compile()`` in a body that names
   ``PyCF_ONLY_AST`` (``ast.parse`` builds a tree, never code), the callees in ``NOT_EDGES``
   (each with its reason), ``isinstance``/``issubclass`` checks against sink types, and the
   str, container and file method names when the object's type is unknown.
3. **Walk.** A breadth-first walk back from the sinks, at most ``MAX_DEPTH`` calls deep, marks
   every node that reaches one, keeping the shortest derivation path and its sink's category.
   Aliases (``m.name`` bound by ``from x import name``) inherit their target's entry. Each entry
   is written as ``[category, kind, next hop, sink]``; ``--explain`` follows the hops.
4. **Hand-picked.** ``HAND_PICKED`` keeps what the walk cannot see (C functions that call their
   arguments, libraries not parsed here), each with what a call does and why it is missed; an
   entry the walk derives is dropped from that list.

Sources: the stdlib of the running Python (``sys.stdlib_module_names``, test suites excluded) is
always derived; ``--source NAME=DIR`` adds a third-party package parsed from a directory (an
installed copy or a checked-out repository, e.g. numpy, joblib, keras). The output records each
source's version. ``--check`` re-derives the stdlib part and fails if the shipped file differs
(exit 2, not comparable, on another CPython release or stdlib layout).

Regenerate:  python scripts/derive_denylist.py --source numpy=DIR@VERSION --source joblib=DIR@VERSION ...
Review:      python scripts/derive_denylist.py --explain NAME   (the path of one entry)
"""

from __future__ import annotations

import argparse
import ast
import builtins
import collections
import hashlib
import io
import json
import os
import sys
import sysconfig
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "app" / "core" / "scanners" / "data" / "dangerous_callables.json"
MAX_DEPTH = 5
SKIP_DIRS = frozenset({"test", "tests", "idle_test", "__pycache__", "site-packages", "testing_data"})
CLASS_ENTRY_METHODS = ("__new__", "__init__", "__setstate__", "__del__")

CODE, COMPILE, PROCESS, WRITE, IMPORT, NETWORK, NATIVE, DESER = (
    "code execution", "code compilation", "process creation", "file write", "dynamic import", "network",
    "native code", "deserialization",
)
READ = "file read"  # hand-picked entries only: the derivation does not treat reads as sinks
# Most severe first: a node reaching two sinks at the same depth is reported under the first.
CATEGORY_ORDER = (PROCESS, CODE, NATIVE, DESER, IMPORT, NETWORK, WRITE, COMPILE, READ)


def _names(prefixes: Iterable[str], names: str) -> list[str]:
    return [f"{p}.{n}" for p in prefixes for n in names.split()]


_OS = ("os", "posix", "nt")
SINKS: dict[str, str] = {
    **dict.fromkeys(["builtins.eval", "builtins.exec", "builtins.breakpoint", "types.FunctionType",
                     "types.LambdaType", "types.CodeType", "code.InteractiveInterpreter.runcode"], CODE),
    **dict.fromkeys(["builtins.compile"], COMPILE),
    **dict.fromkeys([*_names(_OS, "system popen fork forkpty posix_spawn posix_spawnp startfile execl execle "
                                "execlp execlpe execv execve execvp execvpe spawnl spawnle spawnlp spawnlpe "
                                "spawnv spawnve spawnvp spawnvpe"),
                    *_names(["subprocess"], "Popen run call check_call check_output getoutput getstatusoutput"),
                    "_posixsubprocess.fork_exec", "pty.spawn", "pty.fork"], PROCESS),
    **dict.fromkeys([*_names(_OS, "remove unlink rename renames replace rmdir removedirs mkdir makedirs mkfifo "
                                "mknod symlink link truncate chmod lchmod chown lchown"),
                     "_io.FileIO", "io.FileIO", "_pyio.FileIO"], WRITE),
    **dict.fromkeys(["builtins.__import__", "importlib.import_module", "importlib.__import__", "importlib.reload",
                     "importlib._bootstrap._gcd_import", "importlib._bootstrap._find_and_load",
                     "_imp.exec_builtin", "_imp.init_frozen", "_imp.exec_dynamic"], IMPORT),
    **dict.fromkeys([*_names(["socket", "_socket"], "socket create_connection create_server socketpair fromfd "
                                                    "getaddrinfo gethostbyname gethostbyname_ex gethostbyaddr"),
                     "urllib.request.urlopen", "http.client.HTTPConnection", "ftplib.FTP", "smtplib.SMTP",
                     "webbrowser.open"], NETWORK),
    **dict.fromkeys(["_ctypes.dlopen", "_ctypes.LoadLibrary", "ctypes.CDLL", "ctypes.PyDLL",
                     "_imp.create_dynamic", "cffi.FFI.dlopen"], NATIVE),
    **dict.fromkeys([*_names(["pickle", "_pickle", "dill", "cloudpickle"], "loads load Unpickler"),
                     "marshal.loads", "marshal.load", "pickle._Unpickler", "pickle._load", "pickle._loads"], DESER),
}
# Callees whose sink is reached only with text they validate first: not edges (a reason each).
NOT_EDGES: dict[str, str] = {
    # namedtuple(typename, field_names): every name is checked with str.isidentifier() and
    # keyword.iskeyword() before it is formatted into the source eval() compiles.
    "collections.namedtuple": "eval of validated identifiers only",
    # _signature_fromstr(cls, obj, s): eval() of default values parsed from a C builtin's
    # __text_signature__ (inspect._signature_is_builtin), in that builtin's module namespace.
    "inspect._signature_fromstr": "eval of a C builtin's own text signature",
}
# Sinks that are types: handed on as values they are checked against or registered, not called.
SINK_TYPES = frozenset({"types.FunctionType", "types.LambdaType", "types.CodeType", "_io.FileIO", "io.FileIO",
                        "_pyio.FileIO", "socket.socket", "_socket.socket", "subprocess.Popen", "ctypes.CDLL",
                        "ctypes.PyDLL", "pickle.Unpickler", "_pickle.Unpickler"})
# Calls that are sinks only with some arguments: open() in a writing mode, os.open() with write flags.
OPEN_CALLS = frozenset({"builtins.open", "io.open", "_io.open", "_pyio.open", "codecs.open"})
OPEN_WRITE = "open(..., write mode)"  # the pseudo-sink those calls stand for
OS_OPEN_CALLS = frozenset({"os.open", "posix.open", "nt.open"})
READ_FLAGS = frozenset({"O_RDONLY", "O_CLOEXEC", "O_NOFOLLOW", "O_DIRECTORY", "O_NONBLOCK", "O_BINARY",
                        "O_NOINHERIT", "O_NOCTTY", "O_NDELAY", "O_PATH", "O_NOATIME"})
BUILTINS = frozenset(dir(builtins))

_NOT_PARSED = "not parsed here (no source available to this script)"
# Dangerous callables the derivation misses: category, what a call does, why the walk misses it.
# The script drops an entry from the shipped list once the derivation finds it.
HAND_PICKED: dict[str, tuple[str, str, str]] = {
    **{f"torch.{n}": (c, does, f"torch {_NOT_PARSED}") for n, c, does in [
        ("load", DESER, "unpickles a file"), ("save", WRITE, "writes a file"),
        ("compile", CODE, "generates and runs code"), ("storage._load_from_bytes", DESER, "unpickles bytes"),
        ("from_file", WRITE, "maps a file; shared=True writes to it")]},
    **{n: (DESER, "unpickles a file", f"pandas {_NOT_PARSED}") for n in ["pandas.read_pickle",
                                                                         "pandas.io.pickle.read_pickle"]},
    "functools.reduce": (CODE, "calls its first argument", "a C function: an argument caller the AST cannot see"),
    "itertools.starmap": (CODE, "calls its first argument with every item", "a C type"),
    "numpy.fromfile": (READ, "reads any local file", "a C function (numpy._core.multiarray)"),
    "numpy.loadtxt": (READ, "reads any local file or URL (numpy's DataSource)",
                      "reached through an attribute path (np.lib._datasource) the walk does not resolve"),
    "numpy.memmap": (WRITE, "maps a file, mode w+ creates it",
                     "re-exported through a chain the walk does not follow; numpy._core.memmap.memmap is derived"),
    "numpy.DataSource": (WRITE, "its __del__ removes its cache directory", "re-exported lazily by numpy.__init__"),
    "uuid._popen": (PROCESS, "runs a command", "a CPython < 3.9 helper, absent from this stdlib"),
    "logging.FileHandler": (WRITE, "opens its file for writing",
                            "opens through a default argument (open_func=open) the walk cannot follow"),
}
# A method called on an object of unknown type is matched to the module's own methods of that
# name, unless the name is a method of the builtin containers or of file objects: ``s.replace``
# on a string is not ``Path.replace``, ``f.write`` on a file is not ``Mailbox.write``.
NOT_DISPATCHED = frozenset(
    name for t in (str, bytes, bytearray, list, dict, set, tuple, int, float, object, io.BufferedRandom,
                   io.TextIOWrapper, io.BytesIO) for name in dir(t)
)


@dataclass
class Module:
    name: str
    is_package: bool
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> dotted target
    stars: list[str] = field(default_factory=list)
    functions: set[str] = field(default_factory=set)
    classes: dict[str, list[str]] = field(default_factory=dict)  # class -> unresolved base expressions
    methods: dict[str, set[str]] = field(default_factory=dict)  # class -> method names
    bodies: dict[str, list[ast.AST]] = field(default_factory=dict)  # node -> statements


# -- discovery
def stdlib_layout() -> str:
    """Which stdlib modules this interpreter ships (distributions split out tkinter, idlelib...)."""
    names = "\n".join(name for name, _ in stdlib_files())
    return hashlib.sha256(names.encode()).hexdigest()[:16]


def stdlib_files() -> Iterator[tuple[str, Path]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    for top in sorted(sys.stdlib_module_names):
        if (root / top).is_dir():
            yield from package_files(top, root / top)
        elif (root / f"{top}.py").is_file():
            yield top, root / f"{top}.py"


def package_files(name: str, root: Path) -> Iterator[tuple[str, Path]]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and d.isidentifier())
        rel = Path(dirpath).relative_to(root).parts
        if "__init__.py" not in filenames:
            dirnames[:] = []
            continue
        for filename in sorted(filenames):
            stem = filename[:-3]
            if filename.endswith(".py") and stem.isidentifier() and not _is_test(stem):
                parts = [name, *rel] + ([] if stem == "__init__" else [stem])
                yield ".".join(parts), Path(dirpath) / filename


def _is_test(stem: str) -> bool:
    return stem.startswith("test_") or stem.endswith("_test") or stem == "conftest"


# -- parsing
def parse_module(name: str, path: Path) -> Module | None:
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (SyntaxError, ValueError):
        return None  # e.g. lib2to3 grammar fixtures, py2-only files
    mod = Module(name, path.name == "__init__.py")
    _collect_imports(mod, tree)
    top: list[ast.AST] = []
    _collect_top(mod, tree.body, top)
    mod.bodies[name] = top
    return mod


def _collect_top(mod: Module, body: list[ast.stmt], top: list[ast.AST]) -> None:
    """Module-level definitions, also those inside top-level if/try/with blocks (``if _exists("fork"):
    def _spawnvef``); what is left is what an import runs, minus the ``__main__`` block."""
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            mod.functions.add(stmt.name)
            mod.bodies[f"{mod.name}.{stmt.name}"] = [stmt]
        elif isinstance(stmt, ast.ClassDef):
            _collect_class(mod, stmt)
        elif isinstance(stmt, ast.If) and "__main__" in ast.unparse(stmt.test):
            continue
        elif isinstance(stmt, ast.If | ast.Try | ast.With):
            if isinstance(stmt, ast.If):
                top.append(stmt.test)
            elif isinstance(stmt, ast.With):
                top.extend(item.context_expr for item in stmt.items)
            for block in ("body", "orelse", "finalbody"):
                _collect_top(mod, getattr(stmt, block, []), top)
            for handler in getattr(stmt, "handlers", []):
                _collect_top(mod, handler.body, top)
        else:
            top.append(stmt)
            _collect_assign_alias(mod, stmt)


def _collect_imports(mod: Module, tree: ast.Module) -> None:
    package = mod.name if mod.is_package else mod.name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                mod.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(package, node.module, node.level)
            for a in node.names:
                if a.name == "*":
                    mod.stars.append(base)
                else:
                    mod.aliases.setdefault(a.asname or a.name, f"{base}.{a.name}")


def _absolute(package: str, module: str | None, level: int) -> str:
    if level == 0:
        return module or ""
    parts = package.split(".")
    base = parts[: len(parts) - (level - 1)] if level > 1 else parts
    return ".".join([*base, module] if module else base)


def _collect_class(mod: Module, node: ast.ClassDef) -> None:
    mod.classes[node.name] = [ast.unparse(b) for b in node.bases]
    mod.methods[node.name] = set()
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            mod.methods[node.name].add(stmt.name)
            mod.bodies[f"{mod.name}.{node.name}.{stmt.name}"] = [stmt]
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name):
            for target in stmt.targets:  # ``__call__ = run``: the same method under a second name
                if isinstance(target, ast.Name) and stmt.value.id in mod.methods[node.name]:
                    mod.methods[node.name].add(target.id)
                    mod.bodies[f"{mod.name}.{node.name}.{target.id}"] = [
                        ast.Expr(ast.Call(ast.Attribute(ast.Name("self"), stmt.value.id), [], []))]


def _collect_assign_alias(mod: Module, stmt: ast.AST) -> None:
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name | ast.Attribute):
        dotted = _dotted(stmt.value)
        for target in stmt.targets:
            if dotted and isinstance(target, ast.Name):
                mod.aliases.setdefault(target.id, f"@{dotted}")  # resolved later, in the module's scope


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


# -- resolution
class Graph:
    def __init__(self, modules: dict[str, Module]) -> None:
        self.modules = modules
        self.edges: dict[str, set[str]] = collections.defaultdict(set)
        self.kinds: dict[str, str] = {}
        self.aliases: dict[str, str] = {}
        self.open_writes: set[str] = set()  # nodes that call open()/os.open() to write
        self._resolving: set[tuple[str, str]] = set()

    def resolve(self, dotted: str, hops: int = 0) -> str:
        """The defining name of ``dotted``: follow module aliases and star imports."""
        if hops > 8:
            return dotted
        parts = dotted.split(".")
        for i in range(len(parts) - 1, 0, -1):
            mod = self.modules.get(".".join(parts[:i]))
            if mod is None:
                continue
            head, rest = parts[i], parts[i + 1:]
            target = self._member(mod, head)
            if target is None:
                return dotted
            if target == f"{mod.name}.{head}":
                return self._method(target, rest) if rest else target
            return self.resolve(".".join([target, *rest]), hops + 1)
        return dotted

    def _member(self, mod: Module, head: str) -> str | None:
        if head in mod.functions or head in mod.classes:
            return f"{mod.name}.{head}"
        if head in mod.aliases:
            target = mod.aliases[head]
            if not target.startswith("@"):
                return target
            if (mod.name, head) in self._resolving:
                return None  # ``a = b; b = a``
            self._resolving.add((mod.name, head))
            try:
                return self.local(mod, target[1:])
            finally:
                self._resolving.discard((mod.name, head))
        if f"{mod.name}.{head}" in self.modules:
            return f"{mod.name}.{head}"
        for star in mod.stars:
            if star in self.modules and self._member(self.modules[star], head) is not None:
                return f"{star}.{head}"
            if star not in self.modules:
                return f"{star}.{head}"  # a C module: ``from posix import *``
        return None

    def local(self, mod: Module, dotted: str) -> str:
        """A dotted expression as written in ``mod``, made absolute."""
        head, _, rest = dotted.partition(".")
        if head in mod.functions or head in mod.classes or head in mod.aliases or head in self._star_names(mod):
            base = self._member(mod, head) or f"{mod.name}.{head}"
        elif head in BUILTINS:
            base = f"builtins.{head}"
        elif c_stars := [s for s in mod.stars if s not in self.modules]:
            base = f"{c_stars[0]}.{head}"  # os.py calls fork() from ``from posix import *``
        else:
            return f"?{dotted}"
        return self.resolve(f"{base}.{rest}" if rest else base)

    def _star_names(self, mod: Module) -> set[str]:
        names: set[str] = set()
        for star in mod.stars:
            other = self.modules.get(star)
            if other is not None:
                names |= other.functions | set(other.classes)
        return names

    def _method(self, cls: str, rest: list[str]) -> str:
        if len(rest) != 1:
            return ".".join([cls, *rest])
        return self.lookup(cls, rest[0]) or f"{cls}.{rest[0]}"

    def lookup(self, cls: str, name: str, seen: frozenset[str] = frozenset()) -> str | None:
        """Method resolution along the bases the AST can name."""
        mod_name, _, cls_name = cls.rpartition(".")
        mod = self.modules.get(mod_name)
        if mod is None or cls_name not in mod.classes or cls in seen:
            return None
        if name in mod.methods[cls_name]:
            return f"{cls}.{name}"
        for base in mod.classes[cls_name]:
            found = self.lookup(self.local(mod, base), name, seen | {cls})
            if found:
                return found
        return None


def build_graph(modules: dict[str, Module]) -> Graph:
    graph = Graph(modules)
    for mod in modules.values():
        for node_name, body in mod.bodies.items():
            _add_edges(graph, mod, node_name, body)
        for cls in mod.classes:
            full = f"{mod.name}.{cls}"
            graph.kinds[full] = "class"
            for method in CLASS_ENTRY_METHODS:
                found = graph.lookup(full, method)
                if found:
                    graph.edges[full].add(found)
            for method in mod.methods[cls]:
                graph.kinds.setdefault(f"{full}.{method}", "method")
        for fn in mod.functions:
            graph.kinds[f"{mod.name}.{fn}"] = "function"
        graph.kinds[mod.name] = "module import"
        for local in mod.aliases:
            if local not in mod.functions and local not in mod.classes:
                graph.aliases[f"{mod.name}.{local}"] = graph.local(mod, local)
    return graph


def _add_edges(graph: Graph, mod: Module, node_name: str, body: list[ast.AST]) -> None:
    cls = _class_of(mod, node_name)
    edges = graph.edges[node_name]
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                for target in _call_targets(graph, mod, cls, node.func):
                    if target in OPEN_CALLS | OS_OPEN_CALLS:
                        if _writes(target, node):
                            graph.open_writes.add(node_name)
                    elif target == "builtins.compile" and _ast_only(body):
                        continue  # ast.parse: compile(..., PyCF_ONLY_AST) builds a tree, never code
                    elif target not in NOT_EDGES:
                        edges.add(target)
                edges.update(_sinks_handed_on(graph, mod, node))


def _sinks_handed_on(graph: Graph, mod: Module, call: ast.Call) -> list[str]:
    """A sink function passed as an argument is called later: ``map(os.unlink, ...)``,
    ``Thread(target=os.system)``. Types tested with isinstance() or registered are not calls."""
    if isinstance(call.func, ast.Name) and call.func.id in ("isinstance", "issubclass"):
        return []
    found = []
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        dotted = _dotted(arg)
        target = graph.local(mod, dotted) if dotted else None
        if target in SINKS and target not in SINK_TYPES:
            found.append(target)
    return found


def _ast_only(body: list[ast.AST]) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "PyCF_ONLY_AST" for stmt in body for n in ast.walk(stmt))


def _class_of(mod: Module, node_name: str) -> str | None:
    rest = node_name[len(mod.name) + 1:].split(".")
    return f"{mod.name}.{rest[0]}" if len(rest) == 2 and rest[0] in mod.classes else None


def _call_targets(graph: Graph, mod: Module, cls: str | None, func: ast.AST) -> list[str]:
    if isinstance(func, ast.Attribute):
        base = func.value
        if cls and isinstance(base, ast.Name) and base.id in ("self", "cls"):
            found = graph.lookup(cls, func.attr)
            return [found] if found else _same_module_methods(mod, func.attr)
        if cls and isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super":
            _, _, cls_name = cls.rpartition(".")
            return [t for b in mod.classes[cls_name] if (t := graph.lookup(graph.local(mod, b), func.attr))]
        if isinstance(base, ast.Call) and (made := _dotted(base.func)):
            found = graph.lookup(graph.local(mod, made), func.attr)  # Pdb().run(...): the new object's method
            if found:
                return [found]
        dotted = _dotted(func)
        if dotted:
            target = graph.local(mod, dotted)
            if not target.startswith("?") and _head_known(graph, mod, dotted):
                return [target]
        return _same_module_methods(mod, func.attr)
    dotted = _dotted(func)
    if dotted:
        target = graph.local(mod, dotted)
        return [] if target.startswith("?") else [target]
    return []


def _head_known(graph: Graph, mod: Module, dotted: str) -> bool:
    head = dotted.split(".")[0]
    return head in mod.aliases or head in mod.functions or head in mod.classes or head in BUILTINS


def _same_module_methods(mod: Module, attr: str) -> list[str]:
    if attr in NOT_DISPATCHED or (attr.startswith("__") and attr.endswith("__")):
        return []
    return [f"{mod.name}.{c}.{attr}" for c, methods in sorted(mod.methods.items()) if attr in methods]


def _writes(target: str, call: ast.Call) -> bool:
    if target in OS_OPEN_CALLS:
        flags = call.args[1] if len(call.args) > 1 else _keyword(call, "flags")
        return flags is None or not _read_only_flags(flags)
    mode = call.args[1] if len(call.args) > 1 else _keyword(call, "mode")
    if mode is None:
        return False  # open(path): read
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return bool(set(mode.value) & set("wax+"))
    return True  # a mode chosen by the caller may write


def _read_only_flags(flags: ast.AST) -> bool:
    """``os.O_RDONLY | os.O_CLOEXEC``: every or-ed leaf a read flag; a variable may be anything."""
    if isinstance(flags, ast.BinOp) and isinstance(flags.op, ast.BitOr):
        return _read_only_flags(flags.left) and _read_only_flags(flags.right)
    name = flags.attr if isinstance(flags, ast.Attribute) else flags.id if isinstance(flags, ast.Name) else None
    return name in READ_FLAGS


def _keyword(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


# -- the walk
def derive(graph: Graph, sinks: dict[str, str] | None = None, not_edges: Iterable[str] = (),
           open_writes: bool = True) -> dict[str, tuple[str, list[str]]]:
    """name -> (category, path to the sink), shortest path, at most MAX_DEPTH calls.

    ``sinks`` (default ``SINKS``) and the nodes in ``not_edges`` (besides ``NOT_EDGES``, never
    marked) let scripts/derive_code_sinks.py walk back from its own sinks over the same graph."""
    sinks = SINKS if sinks is None else sinks
    cut = frozenset(NOT_EDGES) | frozenset(not_edges)
    reverse: dict[str, set[str]] = collections.defaultdict(set)
    for src, targets in graph.edges.items():
        for target in targets:
            target = graph.aliases.get(target, target)
            owner = target.rpartition(".")[0]
            reverse[owner if owner in sinks else target].add(src)  # Unpickler.__init__(self, f): the sink class
    found: dict[str, tuple[str, list[str]]] = {}
    frontier = []
    for sink, category in sinks.items():
        found[sink] = (category, [sink])
        frontier.append(sink)
    if open_writes:
        found[OPEN_WRITE] = (WRITE, [OPEN_WRITE])
        frontier.append(OPEN_WRITE)
        for node in graph.open_writes:
            reverse[OPEN_WRITE].add(node)
    for _ in range(MAX_DEPTH):
        frontier = _step(frontier, reverse, found, cut)
    for alias, target in graph.aliases.items():
        if target in found and alias not in found and graph.kinds.get(target) != "module import":
            found[alias] = (found[target][0], [alias, *found[target][1]])
    return found


def _step(frontier: list[str], reverse: dict[str, set[str]], found: dict[str, tuple[str, list[str]]],
          cut: frozenset[str]) -> list[str]:
    reached: dict[str, tuple[str, list[str]]] = {}
    for node in frontier:
        category, path = found[node]
        for caller in sorted(reverse.get(node, ())):
            if caller in found or caller in cut:
                continue
            best = reached.get(caller)
            if best is None or CATEGORY_ORDER.index(category) < CATEGORY_ORDER.index(best[0]):
                reached[caller] = (category, [caller, *path])
    found.update(reached)
    return sorted(reached)


# -- sources and output
def load_modules(files: Iterable[tuple[str, Path]]) -> dict[str, Module]:
    modules = {}
    for name, path in files:
        mod = parse_module(name, path)
        if mod is not None:
            modules[name] = mod
    return modules


def derive_sources(extra: dict[str, Path]) -> dict[str, dict[str, list[str]]]:
    """Per source (``stdlib`` first), the entries whose names fall in that source's packages."""
    files = list(stdlib_files())
    for name, root in extra.items():
        files += list(package_files(name, root))
    modules = load_modules(files)
    graph = build_graph(modules)
    found = derive(graph)
    stdlib = {f[0] for f in stdlib_files()}
    out: dict[str, dict[str, list[str]]] = {"stdlib": {}, **{n: {} for n in extra}}
    for name, (category, path) in sorted(found.items()):
        owner = _owner(name, stdlib, extra)
        kind = "sink" if name in SINKS else graph.kinds.get(name) or ("alias" if name in graph.aliases else None)
        if owner and kind:
            # [category, kind, next hop, sink]: --explain follows the hops back to the sink
            out[owner][name] = [category, kind, path[1] if len(path) > 1 else "", path[-1]]
    return out


def _owner(name: str, stdlib: set[str], extra: dict[str, Path]) -> str | None:
    top = name.split(".")[0]
    if top in extra:
        return top
    return "stdlib" if top in sys.stdlib_module_names else None


def write(extra: dict[str, Path], versions: dict[str, str]) -> None:
    derived = derive_sources(extra)
    kept = {n: list(v) for n, v in sorted(HAND_PICKED.items()) if not any(n in d for d in derived.values())}
    for name in sorted(set(HAND_PICKED) - set(kept)):
        print(f"hand-picked {name} is now derived: dropped from the hand-picked list")
    header = {
        "about": "Generated by scripts/derive_denylist.py: do not edit by hand (docs/detection.md).",
        "max_depth": MAX_DEPTH,
        "versions": {"stdlib": sys.version.split()[0], **versions},
        "stdlib_layout": stdlib_layout(),
    }
    OUT.write_text(render(header, derived, kept), encoding="utf-8")


def render(header: dict[str, object], derived: dict[str, dict[str, list[str]]], kept: dict[str, list[str]]) -> str:
    """JSON with one entry per line, so that a regenerated list reviews as a readable diff."""
    lines = [f"{json.dumps(key)}: {json.dumps(value, sort_keys=True)}," for key, value in sorted(header.items())]
    sections = ",\n".join(f"{json.dumps(name)}: {_entries(entries)}" for name, entries in sorted(derived.items()))
    lines += [f'"derived": {{\n{sections}\n}},', f'"hand_picked": {_entries(kept)}']
    return "{\n" + "\n".join(lines) + "\n}\n"


def _entries(entries: dict[str, list[str]]) -> str:
    body = ",\n".join(f"{json.dumps(name)}: {json.dumps(value)}" for name, value in sorted(entries.items()))
    return "{\n" + body + "\n}"


def check() -> int:
    shipped = json.loads(OUT.read_text(encoding="utf-8"))
    if shipped["versions"]["stdlib"] != sys.version.split()[0] or shipped["stdlib_layout"] != stdlib_layout():
        print(f"shipped list was derived on another stdlib (Python {shipped['versions']['stdlib']}, or a "
              "distribution that splits modules out): not comparable here")
        return 2
    fresh = derive_sources({})["stdlib"]
    if fresh != shipped["derived"]["stdlib"]:
        gone = sorted(set(shipped["derived"]["stdlib"]) - set(fresh))[:20]
        new = sorted(set(fresh) - set(shipped["derived"]["stdlib"]))[:20]
        print(f"stdlib part differs: missing now {gone}, new {new}")
        return 1
    print(f"stdlib part matches ({len(fresh)} entries)")
    return 0


def explain(shipped: dict[str, dict[str, dict[str, list[str]]]], name: str) -> str:
    """The derivation path of one shipped entry, hop by hop down to its sink."""
    entries = {n: e for section in shipped["derived"].values() for n, e in section.items()}
    if name in shipped["hand_picked"]:
        _, does, why = shipped["hand_picked"][name]
        return f"hand-picked: {does}; missed by the walk: {why}"
    path, hop = [name], name
    while hop in entries and entries[hop][2] and len(path) <= MAX_DEPTH + 2:
        hop = entries[hop][2]
        path.append(hop)
    if path[-1] != entries[name][3]:
        path.append(entries[name][3])
    return " -> ".join(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", action="append", default=[], metavar="NAME=DIR[@VERSION]",
                        help="a third-party package directory to parse (never imported)")
    parser.add_argument("--check", action="store_true", help="compare the stdlib part with the shipped file")
    parser.add_argument("--explain", metavar="NAME", help="print the shipped derivation of one entry")
    args = parser.parse_args(argv)
    if args.check:
        return check()
    if args.explain:
        shipped = json.loads(OUT.read_text(encoding="utf-8"))
        for source, entries in [*shipped["derived"].items(), ("hand-picked", shipped["hand_picked"])]:
            if args.explain in entries:
                print(f"{source}: {entries[args.explain][0]}: {explain(shipped, args.explain)}")
                return 0
        print(f"{args.explain}: not derived")
        return 1
    write(*parse_sources(args.source))
    return 0


def parse_sources(specs: Iterable[str]) -> tuple[dict[str, Path], dict[str, str]]:
    """``NAME=DIR@VERSION`` options -> (name -> source folder, name -> version)."""
    extra, versions = {}, {}
    for spec in specs:
        name, _, rest = spec.partition("=")
        directory, _, version = rest.partition("@")
        extra[name], versions[name] = Path(directory), version or "unknown"
    return extra, versions


if __name__ == "__main__":
    sys.exit(main())
