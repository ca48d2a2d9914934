"""The derived remote-code sink catalogue (issue 23, item 3): the shipped data file, its
reproducibility on this Python, and shipped modules that call sinks only the derivation knows.

Hostile modules are source text written into tmp_path and only parsed; payloads are
"echo hfvet-test" and inert strings."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners.python_code import names as pn
from app.core.scanners.python_code import sinks
from app.core.scanners.python_code.names import Names
from app.core.scanners.remote_code_scanner import RemoteCodeScanner
from app.sources.local import LocalSource

ROOT = Path(__file__).resolve().parents[4]
SCRIPT = ROOT / "scripts" / "derive_code_sinks.py"
KINDS = {"process", "exec", "native-code", "network", "deserialize"}
NODE_KINDS = {"sink", "function", "class", "method", "alias", "inherited"}
PAYLOAD = "import os; os.system('echo hfvet-test')"


def shipped() -> dict[str, dict[str, dict[str, list[object]]]]:
    data: dict[str, dict[str, dict[str, list[object]]]] = json.loads(sinks.DATA_FILE.read_text(encoding="utf-8"))
    return data


# -- the data file
def test_data_file_records_its_sources_and_every_entry_has_a_path_to_a_sink() -> None:
    data = shipped()
    assert set(data["versions"]) >= {"stdlib", "cffi", "numpy", "requests", "httpx", "urllib3", "huggingface_hub"}
    hand = data["hand_picked"]
    for name, (kind, does, why) in hand.items():
        assert kind in KINDS and does and why, name
    for section in data["derived"].values():
        assert list(section) == sorted(section)
        for name, (kind, node_kind, path) in section.items():
            assert kind in KINDS and node_kind in NODE_KINDS, name
            assert isinstance(path, list) and path[0] == name and len(path) <= int(str(data["max_depth"])) + 4, name
            assert not any(part.startswith("_") for part in name.split(".")), f"{name}: not public"


def test_the_stdlib_part_is_what_the_script_derives_here() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True,
                            timeout=600, check=False)
    if result.returncode == 2:
        pytest.skip(result.stdout.strip())  # shipped from another CPython patch release
    assert result.returncode == 0, result.stdout + result.stderr


KNOWN = [
    ("cffi.FFI.dlopen", "native-code"), ("cffi.api.FFI.dlopen", "native-code"),
    ("numpy.ctypeslib.load_library", "native-code"), ("timeit.timeit", "exec"), ("timeit.Timer", "exec"),
    ("code.InteractiveInterpreter.runsource", "exec"), ("code.InteractiveConsole.push", "exec"),
    ("cProfile.run", "exec"), ("profile.run", "exec"), ("pdb.run", "exec"), ("trace.Trace.run", "exec"),
    ("runpy.run_path", "exec"), ("doctest.testmod", "exec"), ("imp.load_source", "exec"),
    ("multiprocessing.Process.start", "process"), ("multiprocessing.Pool", "process"),
    ("concurrent.futures.ProcessPoolExecutor.submit", "process"), ("xmlrpc.client.ServerProxy", "network"),
    ("asyncio.open_connection", "network"), ("asyncio.start_server", "network"),
    ("requests.get", "network"), ("requests.Session.post", "network"), ("httpx.get", "network"),
    ("httpx.Client.get", "network"), ("urllib3.PoolManager.urlopen", "network"),
    ("urllib3.HTTPConnectionPool.urlopen", "network"),
    ("huggingface_hub.HfApi.list_models", "network"), ("importlib.util.module_from_spec", "exec"),
    ("multiprocessing.connection.Client", "network"), ("numpy.load", "deserialize"),
]


@pytest.mark.parametrize(("name", "kind"), KNOWN)
def test_known_sinks_are_in_the_catalogue_with_their_kind(name: str, kind: str) -> None:
    assert sinks.lookup(name) is not None, name
    assert sinks.lookup(name)[0] == kind  # type: ignore[index]


@pytest.mark.parametrize("name", ["platform.system", "platform.machine", "dataclasses.dataclass",
                                  "typing.get_type_hints", "inspect.signature", "collections.namedtuple",
                                  "json.loads", "os.path.join", "logging.getLogger"])
def test_excluded_and_plain_callables_are_not_sinks(name: str) -> None:
    assert sinks.lookup(name) is None


def test_the_hand_written_sets_stay_a_floor() -> None:
    # imp.load_source derives as exec, but the hand list says native code: the floor wins.
    assert sinks.lookup("imp.load_source")[0] == "exec"  # type: ignore[index]
    assert pn.derived_kind("imp.load_source") is None and pn.is_native("imp.load_source")
    # A hub download stays with the foreign-repo checks, never plain network.
    assert pn.derived_kind("huggingface_hub.hf_hub_download") is None
    for name in [*pn.PROCESS, *pn.NATIVE_CODE]:
        assert pn.is_process(name) or pn.is_native(name), name


# -- instance methods
@pytest.mark.parametrize(("source", "expr", "target"), [
    ("import trace\nt = trace.Trace()\n", "t.run", "trace.Trace.run"),
    ("import code\n", "code.InteractiveInterpreter().runsource", "code.InteractiveInterpreter.runsource"),
    ("import cffi\nffi = cffi.FFI()\n", "ffi.dlopen", "cffi.FFI.dlopen"),
    ("from multiprocessing import Process\np = Process(target=print)\n", "p.start", "multiprocessing.Process.start"),
    ("import requests\ns = requests.Session()\n", "s.get", "requests.Session.get"),
])
def test_methods_of_instances_resolve_through_their_class(source: str, expr: str, target: str) -> None:
    names = Names(ast.parse(source))
    assert names.qualname(ast.parse(expr, mode="eval").body) == target


def test_a_name_bound_twice_is_not_an_instance() -> None:
    names = Names(ast.parse("import trace\nt = trace.Trace()\nt = None\n"))
    assert names.qualname(ast.parse("t.run", mode="eval").body) == "t.run"


# -- shipped modules calling the newly covered sinks
def _vet(tmp_path: Path, source: str) -> Report:
    (tmp_path / "modeling_x.py").write_text(source)
    return vet(LocalSource(tmp_path), [RemoteCodeScanner()], options=VetOptions(workers=1))


FAMILIES = {
    "cffi": ("import cffi", "cffi.FFI().dlopen('libhfvet-test.so')", "native code"),
    "cffi-instance": ("import cffi", "ffi = cffi.FFI()\n{i}ffi.dlopen(self.path)", "native code"),
    "numpy-ctypeslib": ("import numpy as np", "np.ctypeslib.load_library('libx', self.path)", "native code"),
    "timeit": ("import timeit", "timeit.timeit(self.stmt, number=1)", "dynamic code execution"),
    "timeit-Timer": ("from timeit import Timer", "Timer(self.stmt).timeit(1)", "dynamic code execution"),
    "code": ("import code", "code.InteractiveInterpreter().runsource(self.src)", "dynamic code execution"),
    "cProfile": ("import cProfile", "cProfile.run(self.src)", "dynamic code execution"),
    "profile": ("import profile", "profile.run(self.src)", "dynamic code execution"),
    "pdb": ("import pdb", "pdb.run(self.src)", "dynamic code execution"),
    "trace": ("import trace", "t = trace.Trace(count=0)\n{i}t.run(self.src)", "dynamic code execution"),
    "loader": ("import importlib.util",
               "spec = importlib.util.spec_from_file_location('m', self.path)\n{i}spec.loader.exec_module(self.m)",
               "dynamic code execution"),
    "multiprocessing": ("import multiprocessing", "multiprocessing.Process(target=print).start()", "process spawn"),
    "process-pool": ("from concurrent.futures import ProcessPoolExecutor",
                     "ProcessPoolExecutor().submit(print, 'hfvet-test')", "process spawn"),
    "xmlrpc": ("import xmlrpc.client", "xmlrpc.client.ServerProxy(self.url)", "network access"),
    "asyncio": ("import asyncio", "asyncio.open_connection('192.0.2.1', 9)", "network access"),
    "httpx": ("import httpx", "httpx.Client().get(self.url)", "network access"),
}


def _module(imports: str, call: str, where: str) -> str:
    indent = " " * 8
    body = call.format(i=indent)
    head = f"{imports}\n\n\nclass X:\n    def __init__(self):\n"
    if where == "__init__":
        return f"{head}{indent}{body}\n"
    return f"{head}{indent}pass\n\n    def generate(self):\n{indent}{body}\n"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_newly_covered_sink_is_high_at_load_time(tmp_path: Path, family: str) -> None:
    imports, call, label = FAMILIES[family]
    report = _vet(tmp_path, _module(imports, call, "__init__"))
    dangerous = [f for f in report.findings if f.rule == "remote-code-dangerous" and label in f.message]
    assert dangerous, [f.message for f in report.findings]
    assert all(f.severity is Severity.HIGH for f in dangerous)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_newly_covered_sink_is_medium_in_a_later_method(tmp_path: Path, family: str) -> None:
    imports, call, label = FAMILIES[family]
    report = _vet(tmp_path, _module(imports, call, "generate"))
    suspicious = [f for f in report.findings if f.rule == "remote-code-suspicious" and label in f.message]
    assert suspicious, [f.message for f in report.findings]
    assert not [f for f in report.findings if f.rule == "remote-code-dangerous"]


def test_literal_code_given_to_a_derived_exec_sink_is_analysed_too(tmp_path: Path) -> None:
    report = _vet(tmp_path, f"import timeit\n\ntimeit.timeit({PAYLOAD!r}, number=1)\n")
    messages = [f.message for f in report.findings if f.rule == "remote-code-dangerous"]
    assert any("process spawn" in m and "os.system" in m for m in messages), messages
    assert any("timeit.timeit (reaches builtins.exec)" in m for m in messages), messages


def test_a_download_run_through_a_derived_sink_is_critical(tmp_path: Path) -> None:
    source = ("import cProfile\nimport requests\n\n\nclass X:\n    def generate(self):\n"
              "        code = requests.Session().get(self.url).text\n        cProfile.run(code)\n")
    report = _vet(tmp_path, source)
    assert any(f.severity is Severity.CRITICAL for f in report.findings), [f.message for f in report.findings]
