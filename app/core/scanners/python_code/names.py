"""Resolve what a call in Python source refers to (``sp.Popen`` -> ``subprocess.Popen``), statically.

Only names bound by import statements are resolved; nothing is imported or evaluated.
"""

from __future__ import annotations

import ast

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
})
HOME_OR_SITE = frozenset({
    "os.path.expanduser", "os.path.expandvars", "pathlib.Path.home", "site.getsitepackages",
    "site.getusersitepackages", "sysconfig.get_path", "sysconfig.get_paths", "os.getenv",
    "sys.prefix", "sys.base_prefix", "sys.exec_prefix", "site.USER_SITE", "site.USER_BASE",
    "os.environ", "os.environ.get",
})
_BUILTIN_PREFIXES = ("builtins.", "__builtins__.", "__builtin__.")
_BUILTIN_HOLDERS = {"builtins", "__builtins__", "__builtin__", "builtins.__dict__", "__builtins__.__dict__"}


def is_process(name: str) -> bool:
    return name in PROCESS or name.startswith(PROCESS_PREFIXES)


def is_network(name: str) -> bool:
    module, _, func = name.rpartition(".")
    return name in NETWORK or func in NETWORK_MODULES.get(module, ())


class Names:
    """Import aliases of one module, and the dotted name an expression refers to."""

    def __init__(self, tree: ast.AST) -> None:
        self.aliases: dict[str, str] = {}
        for node in ast.walk(tree):
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

    def qualname(self, node: ast.AST) -> str | None:
        name = self._qualname(node)
        if name is None:
            return None
        for prefix in _BUILTIN_PREFIXES:
            if name.startswith(prefix):
                return name[len(prefix):]
        return name

    def _qualname(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self._qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            return self._call_result(node)
        if isinstance(node, ast.Subscript):
            holder = self._qualname(node.value)
            key = folded_str(node.slice)
            if holder in _BUILTIN_HOLDERS and key:
                return key
        return None

    def _call_result(self, call: ast.Call) -> str | None:
        # __import__("os") / import_module("os") / getattr(os, "system") with literal names.
        func = self.qualname(call.func)
        if func in DYNAMIC_IMPORT and call.args:
            return folded_str(call.args[0])
        if func == "getattr" and len(call.args) >= 2:
            base, attr = self._qualname(call.args[0]), folded_str(call.args[1])
            return f"{base}.{attr}" if base and attr else None
        return None


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
