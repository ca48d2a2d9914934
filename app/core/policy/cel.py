"""The CEL boundary: compile `when` expressions, evaluate them, and tame celpy's types and errors.

Each expression is parsed once per process (`compile_cel` caches by its text, so a changed policy
compiles only its changed rules) into a parse tree, a fast closure over it (fastcel.py) and, on
demand, celpy's runner. Trees also persist between processes (parse_cache.py): a policy whose
expressions were all seen before loads without building celpy's Lark parser, and celpy itself loads
only when a rule is new or falls back to it. Nothing of CEL loads on import.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

from app.core.policy.fastcel import FastFn, fast_program
from app.core.policy.parse_cache import cached_tree

if TYPE_CHECKING:
    import celpy

_ENV_LOCK = threading.Lock()  # celpy's Environment.program keeps the last runner on itself
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


@dataclass(frozen=True)
class CelProgram:
    """One compiled `when`: its parse tree, the fast path when the subset allows, celpy's runner on demand."""

    source: str
    tree: Any  # lark.Tree, as celpy's parser gives it (or as parse_cache rebuilds it, identically)
    fast: FastFn | None

    @cached_property
    def runner(self) -> celpy.Runner:
        """celpy's runner (the reference): built, with celpy's Environment, the first time a rule needs it."""
        with _ENV_LOCK:
            return _environment().program(self.tree)


class Activation:
    """The variables of one decision: plain values for the fast path, celpy values made on demand.

    `plain` holds only what JSON gives back (dict, list, str, int, float, bool, None): see to_plain.
    """

    def __init__(self, plain: dict[str, Any]) -> None:
        self.plain = plain

    @cached_property
    def cel(self) -> dict[str, Any]:
        """Converted once per decision, and only if some rule needs celpy."""
        from celpy.adapter import json_to_cel  # lazy, see the module docstring

        return {name: json_to_cel(value) for name, value in self.plain.items()}


@lru_cache(maxsize=1)
def _environment() -> celpy.Environment:
    import celpy  # builds the Lark parser: only when a policy is compiled

    return celpy.Environment()


@lru_cache(maxsize=1024)
def compile_cel(expr: str) -> CelProgram:
    """Parse and prepare an expression once; syntax errors name the expression's line:column."""
    tree = cached_tree(expr, _fresh_tree)
    return CelProgram(expr, tree, fast_program(tree))


def _fresh_tree(expr: str) -> Any:
    """celpy's parse of ``expr`` (building the parser on first use), for a parse_cache miss."""
    from celpy.celparser import CELParseError  # lazy, see the module docstring

    with _ENV_LOCK:
        try:
            return _parse(_environment(), expr)
        except CELParseError as exc:
            raise CelCompileError(
                f"invalid CEL at expression line {exc.line}, column {exc.column}: {_parse_problem(exc)}"
            ) from exc


def _parse(env: celpy.Environment, expr: str) -> Any:
    """The one place an expression is parsed (tests count the calls)."""
    return env.compile(expr)


def _parse_problem(exc: Exception) -> str:
    cause = exc.__context__
    token = getattr(cause, "token", None)
    if token is not None:
        return "unexpected end of expression" if token.type == "$END" else f"unexpected {str(token)!r}"
    char = getattr(cause, "char", None)
    return f"unexpected character {char!r}" if char else "syntax error"


def to_plain(value: Any) -> Any:
    """JSON-able data as JSON gives it back: enums, tuples, dates become str and lists."""
    return json.loads(json.dumps(value, default=str))


def run_bool(program: CelProgram, activation: Activation) -> bool:
    """Evaluate; anything but a CEL bool is an error (the engine fails closed on it).

    The fast path answers when it is sure; otherwise celpy evaluates, with its own messages.
    """
    fast = _fast_answer(program, activation)
    return fast if fast is not None else _run_celpy(program, activation)


def _fast_answer(program: CelProgram, activation: Activation) -> bool | None:
    """The fast path's bool, or None: outside the subset, unsure, or not a bool (celpy says why)."""
    if program.fast is None:
        return None
    try:
        result = program.fast(activation.plain)
    except Exception:  # noqa: BLE001 - Unsure, or any surprise (deep nesting...): celpy decides
        return None
    return result if type(result) is bool else None


def _run_celpy(program: CelProgram, activation: Activation) -> bool:
    import celpy.celtypes  # lazy, see the module docstring
    from celpy.evaluation import CELEvalError

    try:
        result = program.runner.evaluate(activation.cel)
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
