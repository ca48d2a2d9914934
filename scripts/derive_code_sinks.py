"""Derive the remote-code sink catalogue from library source (issue 23, item 3).

What shipped Python (``modeling_*.py`` run with trust_remote_code) must be seen calling: every
public callable of the stdlib and of the libraries below whose body reaches a process start, code
execution, a native-library load, the network or an unsafe deserialization. The remote-code
analysis (``app/core/scanners/python_code/names.py``) classifies a resolved call by this file; its
hand-written sets are a floor the file only adds to.

How the list is derived
-----------------------
1. **Graph.** The call graph of ``scripts/derive_denylist.py`` (its docstring says how it is built:
   ``ast`` only, nothing imported), over the stdlib of the running Python and the packages given
   with ``--source``.
2. **Sinks.** The denylist's sinks of five categories, each mapped to the analysis's kind:
   process creation -> ``process``, code execution -> ``exec``, native code -> ``native-code``,
   network -> ``network``, deserialization -> ``deserialize`` (file writes, dynamic import and
   ``compile`` are not remote-code sinks here: the analysis judges them elsewhere). Beside them
   ``HAND_SINKS``: functions whose body reaches a sink through something the walk cannot see (a C
   backend, an object of unknown type, a subscript), each with its reason.
3. **Walk.** Back from the sinks, at most ``MAX_DEPTH`` calls, shortest path first; a node in
   ``EXCLUDED`` is never marked and nothing is derived through it (each has its reason: the sink
   it reaches runs text or a program the library fixes, not the caller's).
4. **Public names.** Only callables a module would name are written: no segment starts with
   ``_``. A class's methods are also written under every subclass that inherits them
   (``code.InteractiveConsole.runsource``) and under the public aliases of the class
   (``cffi.FFI.dlopen``), so that the analysis can look up ``obj.method`` by the class of ``obj``.

Each entry is ``[kind, node kind, path]``: the path runs from the entry to its sink. The output
records each source's version. ``--check`` re-derives the stdlib part and fails if the shipped
file differs (exit 2, not comparable, on another CPython release or stdlib layout).

Regenerate:  python scripts/derive_code_sinks.py --source cffi=DIR@VERSION --source numpy=DIR@VERSION ...
             (DIR: the package directory, e.g. an unpacked wheel's ``cffi/``)
Review:      python scripts/derive_code_sinks.py --explain NAME
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import derive_denylist as dd

OUT = Path(__file__).resolve().parent.parent / "app" / "core" / "scanners" / "data" / "code_sinks.json"
MAX_DEPTH = dd.MAX_DEPTH
KINDS = {dd.PROCESS: "process", dd.CODE: "exec", dd.NATIVE: "native-code", dd.NETWORK: "network",
         dd.DESER: "deserialize"}
CATEGORY = {kind: category for category, kind in KINDS.items()}

# Functions that reach a sink the walk cannot see: kind, what a call does, why the walk misses it.
HAND_SINKS: dict[str, tuple[str, str, str]] = {
    "cffi.api._load_backend_lib": (
        "native-code", "dlopen()s a shared library (FFI.dlopen)",
        "calls load_library of cffi's C backend (_cffi_backend), an object the AST cannot type"),
    "numpy.ctypeslib._ctypeslib.load_library": (
        "native-code", "loads a shared library with ctypes",
        "loads through a subscript, ctypes.cdll[libpath], not a call"),
    **{f"ctypes.LibraryLoader.{m}": (
        "native-code", "loads a shared library (ctypes.cdll.LoadLibrary, ctypes.cdll.libc)",
        "calls self._dlltype, the CDLL class the loader was made with, an attribute the AST cannot type")
       for m in ("LoadLibrary", "__getattr__", "__getitem__")},
    **{f"asyncio.streams.{f}": (
        "network", "opens a network connection or server",
        "awaits a method of the running event loop (events.get_running_loop()), an object the AST cannot type")
       for f in ("open_connection", "start_server", "open_unix_connection", "start_unix_server")},
    "xmlrpc.client.ServerProxy": (
        "network", "every method called on the proxy is an XML-RPC request over HTTP",
        "the request is dispatched through __getattr__ to a _Method object: no call the AST can follow"),
    "importlib.util.module_from_spec": (
        "exec", "makes a module from a spec: with spec.loader.exec_module (the documented recipe) it runs "
        "that file's code; for an extension-module spec it loads the library",
        "calls spec.loader.create_module, a loader of a type the AST cannot tell"),
    "urllib3.connectionpool.HTTPConnectionPool._make_request": (
        "network", "sends an HTTP request",
        "calls request/getresponse on a connection taken from the pool's queue, an object the AST cannot type"),
    "urllib3.poolmanager.PoolManager.urlopen": (
        "network", "sends an HTTP request",
        "calls urlopen on the pool connection_from_host returns, an object the AST cannot type"),
    "multiprocessing.process.BaseProcess.start": (
        "process", "forks or spawns a new interpreter running the target",
        "calls self._Popen, a staticmethod of the context's Process class chosen at run time"),
    "multiprocessing.pool.Pool._repopulate_pool_static": (
        "process", "starts the pool's worker processes",
        "calls start() on a Process made by the pool's context, an object the AST cannot type"),
    "concurrent.futures.process.ProcessPoolExecutor._spawn_process": (
        "process", "starts a worker process",
        "calls start() on a Process made by the executor's context, an object the AST cannot type"),
    "requests.sessions.Session.send": (
        "network", "sends an HTTP request",
        "sends through adapter.send, the mounted transport adapter (urllib3), an object the AST cannot type"),
    **{f"httpx._client.{c}._send_single_request": (
        "network", "sends an HTTP request",
        "calls handle_request on the client's transport (httpcore), an object the AST cannot type")
       for c in ("Client", "AsyncClient")},
    **{f"{p}.request": (
        "network", "sends an HTTP request",
        "calls request on a client bound by a with statement, a name the walk does not type")
       for p in ("requests.api", "httpx._api")},
    "huggingface_hub.utils._http._http_backoff_base": (
        "network", "sends an HTTP request (with retries)",
        "calls request/stream on get_session()'s client (httpx2), a call result the AST cannot type"),
}
# Public names bound in a way the AST cannot follow: name -> (what it is bound to, how).
HAND_ALIASES: dict[str, tuple[str, str]] = {
    **{f"multiprocessing.{n}": (f"multiprocessing.context.{t}",
                                "bound at import by globals().update() from the default context")
       for n, t in (("Process", "Process"), ("Pool", "BaseContext.Pool"), ("get_context", "BaseContext.get_context"))},
    "concurrent.futures.ProcessPoolExecutor": ("concurrent.futures.process.ProcessPoolExecutor",
                                               "imported on first use by the package's module __getattr__"),
}
# Nodes the walk does not pass through: each reaches a sink only with text or a program the
# library fixes itself (no caller's data chooses what runs), or with names the calling source shows.
EXCLUDED: dict[str, str] = {
    # platform.system()/machine()/platform(): _syscmd_ver runs "ver" (Windows), _syscmd_file runs
    # "file -b" on the interpreter's own path, uname -p: fixed programs, a list argv, no shell.
    "platform._syscmd_ver": "runs a fixed command (cmd /c ver) to read the OS version",
    "platform._syscmd_file": "runs a fixed command (file -b) on a path, argv list, no shell",
    "platform._Processor.from_subprocess": "runs a fixed command (uname -p)",
    # @dataclass: exec of method text built from the class's own field names; defaults and types
    # are passed as objects in the namespace, never formatted into the text.
    "dataclasses._create_fn": "exec of __init__/__repr__/... text generated from the class's field names",
    # typing.get_type_hints / inspect.signature(eval_str=True): eval of annotation strings that
    # are part of the analysed source itself (the walk over that source sees what they call).
    "typing.ForwardRef._evaluate": "eval of a string annotation written in the source",
    "inspect.get_annotations": "eval of string annotations (eval_str=True) written in the source",
}


def public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def derive_sources(extra: dict[str, Path]) -> dict[str, dict[str, list[object]]]:
    """Per source (``stdlib`` first), its public entries: name -> [kind, node kind, path]."""
    files = list(dd.stdlib_files())
    for name, root in extra.items():
        files += list(dd.package_files(name, root))
    graph = dd.build_graph(dd.load_modules(files))
    graph.aliases.update({name: target for name, (target, _) in HAND_ALIASES.items()})
    for name in HAND_ALIASES:
        graph.kinds.setdefault(name, "alias")
    sinks = {n: c for n, c in dd.SINKS.items() if c in KINDS}
    sinks.update({n: CATEGORY[kind] for n, (kind, _, _) in HAND_SINKS.items()})
    found = dd.derive(graph, sinks, EXCLUDED, open_writes=False)
    entries: dict[str, list[object]] = {}
    for name, (category, path) in found.items():
        kind = "sink" if name in sinks else graph.kinds.get(name) or ("alias" if name in graph.aliases else None)
        if kind and kind != "module import":
            entries[name] = [KINDS[category], kind, path]
    _inherited(graph, entries)
    for _ in range(2):  # asyncio -> asyncio.streams, httpx -> httpx._client: one or two star hops
        _star_exports(graph, entries)
    _class_aliases(graph, entries)
    stdlib = {f[0] for f in dd.stdlib_files()}
    out: dict[str, dict[str, list[object]]] = {"stdlib": {}, **{n: {} for n in extra}}
    for name, entry in sorted(entries.items()):
        owner = dd._owner(name, stdlib, extra)
        if owner and public(name):
            out[owner][name] = entry
    return out


def _inherited(graph: dd.Graph, entries: dict[str, list[object]]) -> None:
    """``Sub.m`` for a method ``Base.m`` that reaches a sink and that ``Sub`` inherits."""
    for cls, kind in sorted(graph.kinds.items()):
        if kind != "class":
            continue
        for method in sorted(_method_names(graph, cls)):
            own = f"{cls}.{method}"
            defining = graph.lookup(cls, method)
            if own not in entries and defining and defining in entries:
                sink_kind, _, path = entries[defining]
                entries[own] = [sink_kind, "inherited", [own, *path]]  # type: ignore[list-item]


def _method_names(graph: dd.Graph, cls: str, seen: frozenset[str] = frozenset()) -> set[str]:
    mod_name, _, cls_name = cls.rpartition(".")
    mod = graph.modules.get(mod_name)
    if mod is None or cls_name not in mod.classes or cls in seen:
        return set()
    names = {m for m in mod.methods[cls_name] if not m.startswith("_")} | {"__getattr__", "__getitem__"}
    for base in mod.classes[cls_name]:
        names |= _method_names(graph, graph.local(mod, base), seen | {cls})
    return names


def _star_exports(graph: dd.Graph, entries: dict[str, list[object]]) -> None:
    """``asyncio.open_connection`` for ``asyncio.streams.open_connection``: names a ``from m import *`` re-exports."""
    for mod in sorted(graph.modules.values(), key=lambda m: m.name):
        for star in mod.stars:
            prefix = star + "."
            for name in sorted(n for n in entries if n.startswith(prefix)):
                rest = name[len(prefix):]
                head = rest.split(".")[0]
                if head.startswith("_") or head in mod.functions or head in mod.classes or head in mod.aliases \
                        or f"{star}.{head}" in graph.modules:  # a star import binds no submodules
                    continue
                own = f"{mod.name}.{rest}"
                if own not in entries:
                    sink_kind, _, path = entries[name]
                    entries[own] = [sink_kind, "alias", [own, *path]]  # type: ignore[list-item]


def _class_aliases(graph: dd.Graph, entries: dict[str, list[object]]) -> None:
    """``cffi.FFI.dlopen`` for ``cffi.api.FFI.dlopen``: methods under the public names of their class."""
    for alias, target in sorted(graph.aliases.items()):
        if graph.kinds.get(target) != "class":
            continue
        prefix = target + "."
        for name in [n for n in entries if n.startswith(prefix) and n.count(".") == target.count(".") + 1]:
            own = alias + name[len(target):]
            if own not in entries:
                sink_kind, _, path = entries[name]
                entries[own] = [sink_kind, "alias", [own, *path]]  # type: ignore[list-item]


def write(extra: dict[str, Path], versions: dict[str, str]) -> None:
    derived = derive_sources(extra)
    header = {
        "about": "Generated by scripts/derive_code_sinks.py: do not edit by hand (docs/detection.md).",
        "max_depth": MAX_DEPTH,
        "versions": {"stdlib": sys.version.split()[0], **versions},
        "stdlib_layout": dd.stdlib_layout(),
    }
    hand = {n: list(v) for n, v in sorted(HAND_SINKS.items())}
    OUT.write_text(dd.render(header, derived, hand), encoding="utf-8")  # type: ignore[arg-type]


def check() -> int:
    shipped = json.loads(OUT.read_text(encoding="utf-8"))
    if shipped["versions"]["stdlib"] != sys.version.split()[0] or shipped["stdlib_layout"] != dd.stdlib_layout():
        print(f"shipped list was derived on another stdlib (Python {shipped['versions']['stdlib']}, or a "
              "distribution that splits modules out): not comparable here")
        return 2
    fresh = json.loads(json.dumps(derive_sources({})["stdlib"]))
    if fresh != shipped["derived"]["stdlib"] or shipped["hand_picked"] != {n: list(v) for n, v in HAND_SINKS.items()}:
        gone = sorted(set(shipped["derived"]["stdlib"]) - set(fresh))[:20]
        new = sorted(set(fresh) - set(shipped["derived"]["stdlib"]))[:20]
        print(f"stdlib part or hand-picked sinks differ: missing now {gone}, new {new}")
        return 1
    print(f"stdlib part matches ({len(fresh)} entries)")
    return 0


def explain(name: str) -> str:
    shipped = json.loads(OUT.read_text(encoding="utf-8"))
    for source, entries in shipped["derived"].items():
        if name in entries:
            kind, node_kind, path = entries[name]
            hand = shipped["hand_picked"].get(path[-1])
            why = f" (hand-picked sink: {hand[1]}; missed by the walk: {hand[2]})" if hand else ""
            return f"{source}: {kind} ({node_kind}): {' -> '.join(path)}{why}"
    return f"{name}: not derived"


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
        text = explain(args.explain)
        print(text)
        return 1 if text.endswith("not derived") else 0
    write(*dd.parse_sources(args.source))
    return 0


if __name__ == "__main__":
    sys.exit(main())
