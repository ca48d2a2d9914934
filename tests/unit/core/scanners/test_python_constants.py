"""Constant folding and name resolution in the Python scanner: what attackers build names from.

Only source text is parsed; nothing is imported or evaluated.
"""

from __future__ import annotations

import ast
import base64
import zlib

import pytest

from app.core.scanners.python_code.fold_values import MAX_VALUE
from app.core.scanners.python_code.names import Names


def _names(source: str) -> tuple[Names, ast.Module]:
    tree = ast.parse(source)
    return Names(tree), tree


def _value_of(source: str) -> object:
    """The folded value of the last line's expression."""
    names, tree = _names(source)
    last = tree.body[-1]
    assert isinstance(last, ast.Expr)
    folded = names.constants.fold(last.value)
    return folded.value if folded else None


@pytest.mark.parametrize(("source", "value"), [
    ('"sy" + "stem"', "system"),
    ('"".join(chr(c) for c in [111, 115])', "os"),
    ('"".join([chr(0x6f), chr(100 + 15)])', "os"),
    ('"".join(map(chr, [115, 104]))', "sh"),
    ("bytes([115, 104]).decode()", "sh"),
    ('codecs.decode("flfgrz", "rot13")', "system"),
    ('base64.b64decode("c3lzdGVt").decode()', "system"),
    ('bytes.fromhex("6f73").decode()', "os"),
    ('binascii.unhexlify("6f73")', b"os"),
    ('"metsys"[::-1]', "system"),
    ('"".join(reversed("metsys"))', "system"),
    ('a = "sys"\nf"{a}tem"', "system"),
    ('A = "ev"\nB = A + "al"\nB', "eval"),
    ('bytes(b ^ 1 for b in b"rx")', b"sy"),
    ('"SYSTEM".lower()', "system"),
    ('"s_y_s".replace("_", "")', "sys"),
])
def test_constant_expressions_fold(source: str, value: object) -> None:
    assert _value_of("import codecs, base64, binascii\n" + source) == value


@pytest.mark.parametrize("source", [
    "x",  # unbound
    "x = 'a'\nx = 'b'\nx",  # rebound: no single value
    "def f(x):\n    pass\nx = 'os'\nx",  # also a parameter somewhere
    "'a' * 10_000_000",  # over the cap
    "'%s' % 'x'",  # formatting is not folded
    "open('f').read()",
])
def test_what_is_not_a_constant_does_not_fold(source: str) -> None:
    assert _value_of(source) is None


def test_a_decompression_bomb_folds_to_nothing() -> None:
    bomb = base64.b64encode(zlib.compress(b"\0" * (MAX_VALUE * 4))).decode()
    assert _value_of(f'import zlib, base64\nzlib.decompress(base64.b64decode("{bomb}"))') is None


def _call_target(source: str) -> tuple[str | None, str | None]:
    names, tree = _names(source)
    call = next(n for n in ast.walk(tree.body[-1]) if isinstance(n, ast.Call))
    return names.qualname(call.func), names.hidden(call.func)


@pytest.mark.parametrize(("source", "target"), [
    ('__import__("os.path").system("x")', "os.system"),  # no fromlist: the top package
    ('__import__("os.path", fromlist=["join"]).join("x")', "os.path.join"),
    ('__import__("os.path", None, None, ["join"]).join("x")', "os.path.join"),
    ('importlib.import_module("os.path").join("x")', "os.path.join"),  # import_module returns the leaf
    ('import builtins\nvars(builtins)["ev" + "al"]("x")', "eval"),
    ('import builtins\nbuiltins.__dict__["exec"]("x")', "exec"),
    ('globals()["__builtins__"]["exec"]("x")', "exec"),
    ('__builtins__.get("exec")("x")', "exec"),
    ('import sys\nsys.modules["os"].system("x")', "os.system"),
    ('import os\nvars(os)["system"]("x")', "os.system"),
    ('import os\ns = getattr(os, "sys" + "tem")\ns("x")', "os.system"),
    ('m = __import__("subprocess")\nr = m.run\nr("x")', "subprocess.run"),
])
def test_call_targets_resolve(source: str, target: str) -> None:
    assert _call_target("import importlib\n" + source)[0] == target


def test_hiding_is_noted_but_plain_names_are_not() -> None:
    assert _call_target('import os\nos.system("x")') == ("os.system", None)
    target, hidden = _call_target('import os\ngetattr(os, "".join(["sys", "tem"]))("x")')
    assert target == "os.system"
    assert hidden and "system" in hidden
    _, through_dict = _call_target('import builtins\nvars(builtins)["exec"]("x")')
    assert through_dict and "builtins" in through_dict
