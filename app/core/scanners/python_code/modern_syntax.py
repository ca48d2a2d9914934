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

Nothing is executed: this is text in, text out.
"""

from __future__ import annotations

import ast


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
    from app.core.scanners.python_code.cst_downgrade import NotPython, downgrade  # libcst: only for such code

    try:
        return downgrade(source)
    except NotPython as exc:
        raise error from exc  # not Python in any grammar: the caller reports the 3.11 error
