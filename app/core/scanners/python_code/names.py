"""Resolve what a call in Python source refers to (``sp.Popen`` -> ``subprocess.Popen``), statically.

Nothing is imported or evaluated: names come from import statements, single assignments and
folded constants (``constants``). A name bound to a new instance of a class with sink methods
(``data/code_sinks.json``) stands for that class, so ``t = trace.Trace(); t.run(c)`` resolves to
``trace.Trace.run``.
"""

from __future__ import annotations

import ast

from app.core.scanners.python_code import sinks
from app.core.scanners.python_code.constants import Constants

PROCESS = frozenset({
    "os.system", "os.popen", "os.posix_spawn", "os.posix_spawnp", "os.startfile", "os.fork", "os.forkpty",
    "subprocess.Popen", "subprocess.run", "subprocess.call", "subprocess.check_call",
    "subprocess.check_output", "subprocess.getoutput", "subprocess.getstatusoutput",
    "pty.spawn", "platform.popen", "commands.getoutput", "commands.getstatusoutput",
    "asyncio.create_subprocess_shell", "asyncio.create_subprocess_exec", "pexpect.spawn", "pexpect.run",
})
PROCESS_PREFIXES = ("os.exec", "os.spawn")
EXEC = frozenset({
    "exec", "eval", "compile", "execfile", "runpy.run_path", "runpy.run_module",
    "types.FunctionType", "types.CodeType", "code.interact",
})
DYNAMIC_IMPORT = frozenset({"__import__", "importlib.import_module", "importlib.__import__"})
DECODE = frozenset({
    "base64.b64decode", "base64.b32decode", "base64.b16decode", "base64.a85decode", "base64.b85decode",
    "base64.decodebytes", "base64.decodestring", "base64.standard_b64decode", "base64.urlsafe_b64decode",
    "zlib.decompress", "gzip.decompress", "bz2.decompress", "lzma.decompress", "codecs.decode",
    "binascii.unhexlify", "binascii.a2b_hex", "binascii.a2b_base64", "bytes.fromhex", "bytearray.fromhex",
    "marshal.loads",
})
DESERIALIZE = frozenset({
    "pickle.load", "pickle.loads", "pickle.Unpickler", "_pickle.load", "_pickle.loads", "cPickle.loads",
    "dill.load", "dill.loads", "cloudpickle.load", "cloudpickle.loads", "joblib.load", "marshal.load",
    "marshal.loads", "shelve.open", "yaml.unsafe_load", "torch.load", "numpy.load", "yaml.load",
})
NETWORK = frozenset({
    "urllib.request.urlopen", "urllib.request.urlretrieve", "urllib.request.Request",
    "urllib.request.build_opener", "urllib.urlopen", "urllib.urlretrieve", "urllib2.urlopen",
    "socket.socket", "socket.create_connection", "http.client.HTTPConnection", "http.client.HTTPSConnection",
    "httplib.HTTPConnection", "httplib.HTTPSConnection", "ftplib.FTP", "telnetlib.Telnet", "smtplib.SMTP",
    "torch.hub.load", "torch.hub.load_state_dict_from_url", "torch.hub.download_url_to_file",
    "torch.utils.model_zoo.load_url", "wget.download", "paramiko.SSHClient", "pycurl.Curl",
    "urllib3.PoolManager", "urllib3.request", "aiohttp.ClientSession", "webbrowser.open",
})
NETWORK_MODULES = {  # module -> functions of it that talk to the network
    "requests": {"get", "post", "put", "patch", "delete", "head", "options", "request", "Session"},
    "httpx": {"get", "post", "put", "patch", "delete", "head", "options", "request", "stream",
              "Client", "AsyncClient"},
}
HUB_DOWNLOAD = frozenset({
    "huggingface_hub.hf_hub_download", "huggingface_hub.snapshot_download",
    "huggingface_hub.cached_download", "transformers.utils.cached_file",
    "transformers.utils.hub.cached_file", "modelscope.snapshot_download",
})
NATIVE_CODE = frozenset({
    "ctypes.CDLL", "ctypes.PyDLL", "ctypes.WinDLL", "ctypes.OleDLL", "ctypes.cdll.LoadLibrary",
    "ctypes.windll.LoadLibrary", "ctypes.pydll.LoadLibrary", "ctypes.util.find_library",
    "torch.ops.load_library", "torch.classes.load_library", "torch.utils.cpp_extension.load",
    "torch.utils.cpp_extension.load_inline", "imp.load_dynamic", "importlib.machinery.ExtensionFileLoader",
    "importlib.util.spec_from_file_location", "importlib.util.spec_from_loader", "_ctypes.dlopen",
    "zipimport.zipimporter", "imp.load_source", "imp.load_module",
})
NATIVE_PREFIXES = ("ctypes.cdll.", "ctypes.windll.", "ctypes.oledll.", "ctypes.pydll.")  # ctypes.cdll.libc.system
HOME_OR_SITE = frozenset({
    "os.path.expanduser", "os.path.expandvars", "pathlib.Path.home", "site.getsitepackages",
    "site.getusersitepackages", "sysconfig.get_path", "sysconfig.get_paths", "os.getenv",
    "sys.prefix", "sys.base_prefix", "sys.exec_prefix", "site.USER_SITE", "site.USER_BASE",
    "os.environ", "os.environ.get",
})
_FLOOR = PROCESS | EXEC | DYNAMIC_IMPORT | DESERIALIZE | NETWORK | HUB_DOWNLOAD | NATIVE_CODE
_BUILTIN_PREFIXES = ("builtins.", "__builtins__.", "__builtin__.")
_BUILTIN_HOLDERS = {"builtins", "__builtins__", "__builtin__", "builtins.__dict__", "__builtins__.__dict__"}


# ``spec.loader.exec_module(module)``: runs a module's code, whatever the spec points at.
LOADER_EXEC = (".loader.exec_module", ".loader.load_module")


def is_process(name: str) -> bool:
    return name in PROCESS or name.startswith(PROCESS_PREFIXES) or derived_kind(name) == "process"


def is_exec(name: str) -> bool:
    return name in EXEC or name.endswith(LOADER_EXEC) or derived_kind(name) == "exec"


def is_network(name: str) -> bool:
    module, _, func = name.rpartition(".")
    return name in NETWORK or func in NETWORK_MODULES.get(module, ()) or derived_kind(name) == "network"


def is_deserialize(name: str) -> bool:
    return name in DESERIALIZE or derived_kind(name) == "deserialize"


def is_native(name: str) -> bool:
    return name in NATIVE_CODE or name.startswith(NATIVE_PREFIXES) or derived_kind(name) == "native-code"


def derived_kind(name: str) -> str | None:
    """The kind ``data/code_sinks.json`` gives a call target the hand-written sets do not name.

    The sets above are a floor: a name in one of them keeps its kind (``imp.load_source`` stays
    native code) and hub downloads stay with the foreign-repo checks."""
    entry = sinks.lookup(name)
    if entry is None or name in _FLOOR:
        return None
    return entry[0]


def derived_sink(name: str) -> str | None:
    """What a derived call target reaches (``timeit.timeit`` -> ``builtins.exec``), for messages."""
    entry = sinks.lookup(name) if derived_kind(name) else None
    return entry[1] if entry and entry[1] != name else None


class Names:
    """Import aliases of one module, and the dotted name an expression refers to.

    Names bound by import statements resolve, and so do names bound once to an expression that
    resolves (``s = getattr(os, "sys" + "tem")``). Computed names (folded constants, see
    ``constants``) and lookups through builtins' or globals' dictionaries resolve too, and are
    noted as hidden: ``hidden()`` says how.
    """

    def __init__(self, tree: ast.AST) -> None:
        self.aliases: dict[str, str] = {}
        self.alias_notes: dict[str, str] = {}
        nodes = list(ast.walk(tree))  # walked once, read three times
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.aliases[top] = top
            elif isinstance(node, ast.ImportFrom):
                base = "." * node.level + (node.module or "")
                for alias in node.names:
                    self.aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
        self.constants = Constants(nodes, self)
        self._bind_assignments(nodes)

    def _bind_assignments(self, nodes: list[ast.AST]) -> None:
        """``x = <resolvable expression>`` binds x, when x is bound nowhere else (flow-insensitive)."""
        imported = set(self.aliases)
        assigns = [n for n in nodes if isinstance(n, ast.Assign) and len(n.targets) == 1
                   and isinstance(n.targets[0], ast.Name) and self.constants.bound_once(n.targets[0].id)]
        for _ in range(BIND_PASSES):
            for node in assigns:
                name = node.targets[0].id  # type: ignore[attr-defined]
                if name in imported:
                    continue
                notes: list[str] = []
                target = self._qualname(node.value, notes)
                if target and target != name and not isinstance(node.value, ast.Constant):
                    self.aliases[name] = _strip_builtins(target)
                    if notes:
                        self.alias_notes[name] = notes[0]

    def qualname(self, node: ast.AST) -> str | None:
        name = self._qualname(node, [])
        return _strip_builtins(name) if name is not None else None

    def hidden(self, node: ast.AST) -> str | None:
        """How the name an expression refers to was hidden, or None when it is written plainly."""
        notes: list[str] = []
        self._qualname(node, notes)
        return notes[0] if notes else None

    def _qualname(self, node: ast.AST, notes: list[str]) -> str | None:
        if isinstance(node, ast.Name):
            if node.id in self.alias_notes:
                notes.append(self.alias_notes[node.id])
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self._qualname(node.value, notes)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            return self._call_result(node, notes)
        if isinstance(node, ast.Subscript):
            return self._lookup(self._qualname(node.value, notes), node.slice, notes)
        return None

    def _key(self, node: ast.AST, notes: list[str]) -> str | None:
        folded = self.constants.text(node)
        if folded is None:
            return None
        text = str(folded.value)
        if folded.computed:
            notes.append(f"computed name {text[:60]!r}")
        return text

    def _lookup(self, holder: str | None, key_node: ast.AST, notes: list[str]) -> str | None:
        """``vars(builtins)["eval"]``, ``globals()["__builtins__"]``, ``sys.modules["os"]``, ``os.__dict__[k]``."""
        key = self._key(key_node, notes)
        if holder is None or key is None:
            return None
        if holder in (_GLOBALS, "sys.modules"):
            notes.append(f"looked up through {holder}")
            if holder == _GLOBALS and key == "__builtins__":
                return "builtins"
            return self.aliases.get(key, key) if holder == _GLOBALS else key
        if holder in _BUILTIN_HOLDERS or holder.endswith(".__dict__"):
            notes.append(f"looked up through {holder}")
            base = holder.removesuffix(".__dict__")
            return key if base in _BUILTIN_MODULES else f"{base}.{key}"
        return None

    def _call_result(self, call: ast.Call, notes: list[str]) -> str | None:
        func = self._qualname(call.func, notes)
        func = _strip_builtins(func) if func else None
        if func in DYNAMIC_IMPORT and call.args:
            name = self._key(call.args[0], notes)
            if name and func.endswith("__import__") and not _has_fromlist(call):
                return name.split(".")[0]  # __import__("os.path") returns os, the top package
            return name
        if func == "getattr" and len(call.args) >= 2:
            base, attr = self._qualname(call.args[0], notes), self._key(call.args[1], notes)
            return f"{base}.{attr}" if base and attr else None
        if func in ("globals", "locals") and not call.args:
            return _GLOBALS
        if func == "vars" and len(call.args) == 1:
            base = self._qualname(call.args[0], notes)
            return f"{base}.__dict__" if base else None
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("get", "__getitem__") and call.args:
            holder = self._qualname(call.func.value, notes)
            return self._lookup(holder, call.args[0], notes)
        if func in sinks.owners():
            return func  # an instance of a class with sink methods: ``Timer(s).timeit()``, ``t = Trace(); t.run(c)``
        return None


_GLOBALS = "<globals>"
_BUILTIN_MODULES = {"builtins", "__builtins__", "__builtin__"}
BIND_PASSES = 2  # s = __import__("os"); f = getattr(s, "system"): two hops


def _strip_builtins(name: str) -> str:
    for prefix in _BUILTIN_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _has_fromlist(call: ast.Call) -> bool:
    fromlist = kwarg(call, "fromlist")
    if fromlist is None and len(call.args) >= 4:
        fromlist = call.args[3]
    if fromlist is None:
        return False
    return not (isinstance(fromlist, ast.Tuple | ast.List) and not fromlist.elts) and not (
        isinstance(fromlist, ast.Constant) and not fromlist.value)


def kwarg(node: ast.Call, *keys: str) -> ast.expr | None:
    """The value a call passes by the first of ``keys`` it names, or None."""
    return next((k.value for k in node.keywords if k.arg in keys), None)


def literal_str(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def folded_str(node: ast.AST) -> str | None:
    """The value of a string literal, also when split into pieces ("o" + "s") or reversed."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = folded_str(node.left), folded_str(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.Subscript) and _reversed_slice(node.slice):
        inner = folded_str(node.value)
        step = node.slice.step  # type: ignore[attr-defined]
        if inner is not None and isinstance(step.operand, ast.Constant) and step.operand.value == 1:
            return inner[::-1]
        return None
    return literal_str(node)


def is_computed_string(node: ast.AST, names: Names) -> bool:
    """A string built to hide itself: "o"+"s", "".join(chr(..)), "metsys"[::-1], b64decode(..)."""
    if _literal_concat(node):
        return True
    if not isinstance(node, ast.Constant | ast.Name):
        folded = names.constants.fold(node)
        if folded is not None and folded.computed and isinstance(folded.value, str | bytes):
            return True
    for sub in ast.walk(node):
        if isinstance(sub, ast.Subscript) and _reversed_slice(sub.slice) and literal_str(sub.value) is not None:
            return True
        if isinstance(sub, ast.Call):
            func = names.qualname(sub.func)
            if func in DECODE or (isinstance(sub.func, ast.Attribute) and sub.func.attr == "join"
                                  and any(_uses_chr(a, names) for a in sub.args)):
                return True
    return False


def _uses_chr(node: ast.AST, names: Names) -> bool:
    return any(isinstance(sub, ast.Name) and names.qualname(sub) == "chr" for sub in ast.walk(node))


def _literal_concat(node: ast.AST) -> bool:
    """Pieces of string literals glued with + (dynamic names built from variables do not count)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return False
    leaves = [node.left, node.right]
    while leaves:
        leaf = leaves.pop()
        if isinstance(leaf, ast.BinOp) and isinstance(leaf.op, ast.Add):
            leaves += [leaf.left, leaf.right]
        elif literal_str(leaf) is None:
            return False
    return True


def _reversed_slice(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Slice)
        and isinstance(node.step, ast.UnaryOp)
        and isinstance(node.step.op, ast.USub)
    )
