"""Python written for a newer grammar than this interpreter's ``ast`` reads (3.12+), made readable.

``ast.parse`` on 3.11 rejects PEP 695 (``type X = ...``, ``def f[T](x)``, ``class C[T]:``) and
PEP 701 f-strings (same quotes nested, backslashes, comments inside ``{}``), yet a repo's
``trust_remote_code`` module runs on whatever Python the user has. When ``ast`` fails, libcst
(which parses 3.0-3.14 grammar) reads the module and the few newer constructs are rewritten into
3.11 source that does the same things, every other byte kept, line numbers kept:

- ``type X[T: B] = V`` becomes ``X = V`` (``X = (V, B)`` when a bound or default exists);
- type parameters are dropped from ``def``/``class``; their bounds and defaults stay visible as
  a return annotation (``def``) or a class keyword (``class``), evaluated where the analysis sees them;
- an f-string 3.11 cannot read becomes ``''.join((<text>, str(<expr>), format(<expr>, <spec>)))``,
  which ``constants`` folds like the f-string it was.

Nothing is executed: this is text in, text out. libcst's native parser is not bounded the way
CPython's is (a few thousand nested brackets crash it, a ten-thousand-term ``+`` chain takes
minutes), so it runs in a child process with a time and memory limit; a crash or a timeout is
the original SyntaxError (a ``scan-error``, as before). Only sources that hold a newer construct's
mark (an f-string, ``type X``, ``def f[``, ``class C[``) are handed to it.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys

REWRITE_SECONDS = 30.0  # one module's rewrite in the child process
REWRITE_MEMORY = 2 * 1024 * 1024 * 1024  # the child's address-space limit
_WORKER = "app.core.scanners.python_code.cst_downgrade"
# What only newer grammar can make of: an f-string, a type alias, type parameters.
_NEWER = re.compile(rb"""(?:^|[^\w])[rR]?[fF][rR]?['"]"""  # f"...", rf'...'
                    rb"|^[ \t]*type[ \t]+\w+[ \t]*[\[=]"  # type X = ... / type X[T] = ...
                    rb"|\b(?:def|class)[ \t]+\w+[ \t]*\[", re.MULTILINE)  # def f[T]( / class C[T]


def parse_module(source: bytes | str) -> ast.Module:
    """``ast.parse``, reading newer grammar through ``readable`` when this interpreter cannot."""
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        rewritten = _rewritten(source, exc)
        return ast.parse(rewritten)


def readable(source: bytes | str) -> bytes | str:
    """``source`` itself when ``ast`` reads it, else the rewritten 3.11 source; raises the
    original SyntaxError when even the newer grammar does not read it."""
    try:
        ast.parse(source)
    except SyntaxError as exc:
        return _rewritten(source, exc)
    return source


def _rewritten(source: bytes | str, error: SyntaxError) -> bytes | str:
    raw = source if isinstance(source, bytes) else source.encode("utf-8", "surrogatepass")
    if not _NEWER.search(raw):
        raise error  # Python 2, or broken: no newer construct to rewrite
    try:
        done = subprocess.run(  # noqa: S603 - our own module; the source is data on its stdin
            [sys.executable, "-m", _WORKER, str(REWRITE_MEMORY)], input=raw, capture_output=True,
            timeout=REWRITE_SECONDS, check=False)
    except (subprocess.TimeoutExpired, OSError) as exc:
        raise error from exc
    if done.returncode != 0:
        raise error  # not Python in any grammar libcst knows, or the child hit its limits
    return done.stdout if isinstance(source, bytes) else done.stdout.decode("utf-8", "surrogatepass")
