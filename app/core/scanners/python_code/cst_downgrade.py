"""The libcst rewrite behind ``modern_syntax``: newer-grammar constructs as 3.11 source.

Run as ``python -m app.core.scanners.python_code.cst_downgrade MEMORY_LIMIT`` with the source on
stdin: the rewritten source on stdout, exit status 2 when it is not Python. ``modern_syntax``
runs it in a child process, because libcst's native parser can crash or take minutes on
hostile nesting.
"""

from __future__ import annotations

import ast
import resource
import sys
from collections.abc import Sequence

import libcst as cst

_CONFIG = cst.PartialParserConfig(python_version="3.14")
_CONVERSIONS = {"r": "repr", "s": "str", "a": "ascii"}
TYPE_PARAMS_KEYWORD = "_hfvet_type_params"  # the class keyword that carries type-parameter bounds


class NotPython(Exception):
    """The source does not parse in the newest grammar libcst knows either."""


def downgrade(source: bytes | str) -> bytes | str:
    """``source`` with PEP 695 / PEP 701 constructs rewritten; same type, same line numbers."""
    try:
        module = cst.parse_module(source, config=_CONFIG)
        rewritten = module.visit(_Downgrade(module))
    except (cst.ParserSyntaxError, SyntaxError, ValueError, RecursionError) as exc:
        raise NotPython(str(exc)) from exc
    return rewritten.bytes if isinstance(source, bytes) else rewritten.code


class _Downgrade(cst.CSTTransformer):
    def __init__(self, module: cst.Module) -> None:
        super().__init__()
        self.module = module
        self._in_concat: set[int] = set()  # strings inside an implicit concatenation

    def leave_TypeAlias(self, original_node: cst.TypeAlias, updated_node: cst.TypeAlias) -> cst.Assign:
        value = _with_extras(updated_node.value, _type_param_exprs(updated_node.type_parameters))
        return cst.Assign(targets=[cst.AssignTarget(updated_node.name)], value=value,
                          semicolon=updated_node.semicolon)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if updated_node.type_parameters is None:
            return updated_node
        extras = _type_param_exprs(updated_node.type_parameters)
        returns = updated_node.returns
        if extras:
            base = returns.annotation if returns is not None else cst.Name("None")
            returns = cst.Annotation(_with_extras(base, extras))
        return updated_node.with_changes(type_parameters=None, returns=returns,
                                         whitespace_after_type_parameters=cst.SimpleWhitespace(""))

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        if updated_node.type_parameters is None:
            return updated_node
        extras = _type_param_exprs(updated_node.type_parameters)
        keywords = list(updated_node.keywords)
        if extras:
            keywords.append(cst.Arg(_with_extras(cst.Name("None"), extras), keyword=cst.Name(TYPE_PARAMS_KEYWORD)))
        return updated_node.with_changes(type_parameters=None, keywords=keywords,
                                         whitespace_after_type_parameters=cst.SimpleWhitespace(""))

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> bool:
        self._in_concat.update((id(node.left), id(node.right)))  # rewritten as a whole, on leave
        return True

    def leave_FormattedString(self, original_node: cst.FormattedString,
                              updated_node: cst.FormattedString) -> cst.BaseExpression:
        if id(original_node) in self._in_concat or _reads(self.module.code_for_node(updated_node)):
            return updated_node
        return self._expression(self._converted(updated_node), original_node, updated_node)

    def leave_ConcatenatedString(self, original_node: cst.ConcatenatedString,
                                 updated_node: cst.ConcatenatedString) -> cst.BaseExpression:
        if id(original_node) in self._in_concat or _reads(self.module.code_for_node(updated_node)):
            return updated_node
        # A converted f-string is no longer a literal: implicit concatenation becomes ``+``.
        pieces: list[str] = []
        node: cst.BaseExpression = updated_node
        while isinstance(node, cst.ConcatenatedString):
            pieces.append(self._piece(node.left))
            node = node.right
        pieces.append(self._piece(node))
        return self._expression(" + ".join(pieces), original_node, updated_node)

    def _piece(self, node: cst.BaseExpression) -> str:
        code = self.module.code_for_node(node)
        if isinstance(node, cst.FormattedString) and not _reads(code):
            return self._converted(node)
        return code

    def _converted(self, node: cst.FormattedString) -> str:
        quote = node.start[len(node.prefix):]
        raw = "r" if "r" in node.prefix.lower() else ""
        return self._joined(node.parts, raw + quote, quote)

    def _expression(self, text: str, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        """``text`` as an expression in parentheses, padded with the newlines the original spanned."""
        missing = self.module.code_for_node(original).count("\n") - text.count("\n")
        expression = cst.parse_expression(f"({text}{chr(10) * max(0, missing)})", config=_CONFIG)
        return expression.with_changes(lpar=[*updated.lpar, *expression.lpar],
                                       rpar=[*expression.rpar, *updated.rpar])

    def _joined(self, parts: Sequence[cst.BaseFormattedStringContent], opening: str, quote: str) -> str:
        pieces: list[str] = []
        for part in parts:
            if isinstance(part, cst.FormattedStringText):
                literal = part.value.replace("{{", "{").replace("}}", "}")
                pieces.append(f"{opening}{literal}{quote}")
            elif isinstance(part, cst.FormattedStringExpression):
                pieces.append(self._field(part, opening, quote))
        return "''.join((" + "".join(f"{p}, " for p in pieces) + "))"

    def _field(self, part: cst.FormattedStringExpression, opening: str, quote: str) -> str:
        expression = self.module.code_for_node(part.expression)
        value = f"({expression})"
        prefix = ""
        if part.equal is not None:  # f"{x=}": the expression's text, then its repr by default
            prefix = f"{expression + '='!r} + "
        conversion = part.conversion or ("r" if part.equal is not None and not part.format_spec else None)
        if conversion:
            value = f"{_CONVERSIONS.get(conversion, 'str')}({value})"
        if part.format_spec:
            return f"{prefix}format({value}, {self._joined(part.format_spec, opening, quote)})"
        return f"{prefix}{value if conversion else f'str({value})'}"


def _reads(code: str) -> bool:
    try:
        ast.parse(f"({code}\n)", mode="eval")
    except SyntaxError:
        return False
    return True


def _type_param_exprs(params: cst.TypeParameters | None) -> list[cst.BaseExpression]:
    found: list[cst.BaseExpression] = []
    for param in params.params if params is not None else ():
        if isinstance(param.param, cst.TypeVar) and param.param.bound is not None:
            found.append(param.param.bound)
        if param.default is not None:
            found.append(param.default)
    return found


def _with_extras(value: cst.BaseExpression, extras: list[cst.BaseExpression]) -> cst.BaseExpression:
    if not extras:
        return value
    return cst.Tuple([cst.Element(value), *(cst.Element(e) for e in extras)])


def main() -> int:
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else resource.RLIM_INFINITY
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        rewritten = downgrade(sys.stdin.buffer.read())
    except NotPython:
        return 2
    sys.stdout.buffer.write(rewritten if isinstance(rewritten, bytes) else rewritten.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
