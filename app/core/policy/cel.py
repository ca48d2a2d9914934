"""The CEL boundary: compile `when` expressions, evaluate them, and tame celpy's types and errors."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

import celpy
import celpy.celtypes
from celpy.adapter import json_to_cel
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError

_ENV = celpy.Environment()
_QUOTES = ("'''", '"""', "'", '"')
_ERROR_NOISE = re.compile(r"\s*\(in activation .*", re.DOTALL)


class CelCompileError(ValueError):
    """A `when` expression that does not parse."""


class CelEvalError(RuntimeError):
    """A `when` expression that failed or did not give a bool."""


def canonical_cel(expr: str) -> str:
    """Collapse runs of whitespace outside string literals, so re-wrapping a rule keeps its hash."""
    out: list[str] = []
    i, n = 0, len(expr)
    while i < n:
        quote = next((q for q in _QUOTES if expr.startswith(q, i)), None)
        if quote:
            end = _literal_end(expr, i + len(quote), quote)
            out.append(expr[i:end])
            i = end
        elif expr[i].isspace():
            while i < n and expr[i].isspace():
                i += 1
            out.append(" ")
        else:
            out.append(expr[i])
            i += 1
    return "".join(out).strip()


def _literal_end(expr: str, i: int, quote: str) -> int:
    while i < len(expr):
        if expr[i] == "\\":
            i += 2
        elif expr.startswith(quote, i):
            return i + len(quote)
        else:
            i += 1
    return len(expr)  # unterminated: the parser will report it


@lru_cache(maxsize=1024)
def compile_cel(expr: str) -> celpy.Runner:
    """Parse and prepare an expression once; syntax errors name the expression's line:column."""
    try:
        return _ENV.program(_ENV.compile(expr))
    except CELParseError as exc:
        raise CelCompileError(
            f"invalid CEL at expression line {exc.line}, column {exc.column}: {_parse_problem(exc)}"
        ) from exc


def _parse_problem(exc: CELParseError) -> str:
    cause = exc.__context__
    token = getattr(cause, "token", None)
    if token is not None:
        return "unexpected end of expression" if token.type == "$END" else f"unexpected {str(token)!r}"
    char = getattr(cause, "char", None)
    return f"unexpected character {char!r}" if char else "syntax error"


def to_cel(value: Any) -> Any:
    """Plain JSON-able data -> celpy values (dates and other odd types become strings)."""
    return json_to_cel(json.loads(json.dumps(value, default=str)))


def run_bool(program: celpy.Runner, activation: dict[str, Any]) -> bool:
    """Evaluate; anything but a CEL bool is an error (the engine fails closed on it)."""
    try:
        result = program.evaluate(activation)
    except CELEvalError as exc:
        raise CelEvalError(short_error(exc)) from exc
    except Exception as exc:  # celpy bugs must fail closed, not crash the vet
        raise CelEvalError(f"{type(exc).__name__}: {exc}") from exc
    if isinstance(result, CELEvalError):
        raise CelEvalError(short_error(result))
    if not isinstance(result, celpy.celtypes.BoolType):
        raise CelEvalError(f"`when` must give a bool, got {type(result).__name__}")
    return bool(result)


def short_error(exc: BaseException) -> str:
    """celpy messages embed the whole activation; keep the first sentence."""
    head = exc.args[0] if exc.args else exc
    return _ERROR_NOISE.sub("", str(head))[:300]


def undeclared_name(message: str) -> str | None:
    match = re.match(r"undeclared reference to '([^']+)'", message)
    return match.group(1) if match else None
