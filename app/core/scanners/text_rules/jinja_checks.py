"""Static checks of a Jinja chat template: parse to an AST (never render) and look for SSTI.

Chat templates only need loops, conditionals, string building and a few helpers
(``raise_exception``, ``tojson``, ``strftime_now``, ``namespace``). Reaching Python
internals needs attribute walks (``__class__``, ``__globals__``...), underscore names the
sandbox hides, computed attribute names, or template imports, and those are what is flagged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import jinja2
import jinja2.ext
from jinja2 import nodes
from jinja2.parser import Parser

# Names never defined for a chat template; referencing one only makes sense in an exploit.
DANGEROUS_NAMES = frozenset({
    "os", "sys", "subprocess", "builtins", "__builtins__", "importlib", "__import__", "eval", "exec",
    "getattr", "globals", "locals", "compile", "open", "popen",
})
# Methods that run commands or load code wherever they are called from.
DANGEROUS_CALLS = frozenset({
    "system", "popen", "eval", "exec", "__import__", "import_module", "load_module", "getoutput",
    "check_output", "check_call", "spawnv", "spawnl", "execv", "execl", "fork", "startfile",
})
# Objects whose attributes lead to Python internals (Flask and Jinja globals used in SSTI chains).
GADGET_GLOBALS = frozenset({
    "self", "config", "request", "lipsum", "cycler", "joiner", "namespace", "range", "dict",
    "url_for", "get_flashed_messages",
})
_DUNDER_TEXT = re.compile(r"__[A-Za-z]|[A-Za-z]__")
MAX_EVIDENCE = 8


class _GenerationTag(jinja2.ext.Extension):
    """transformers' ``{% generation %}...{% endgeneration %}`` block, parsed as a plain scope."""

    tags = {"generation"}

    def parse(self, parser: Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.Scope(body, lineno=lineno)


# Same syntax transformers accepts: loop controls and the generation tag.
_ENV = jinja2.Environment(extensions=["jinja2.ext.loopcontrols", _GenerationTag])  # noqa: S701 - never rendered


def parse(source: str) -> nodes.Template:
    """The template's AST. Raises ``jinja2.TemplateSyntaxError`` (or RecursionError) when unparseable."""
    return _ENV.parse(source)


def injection_evidence(tree: nodes.Template) -> list[str]:
    """Human-readable reasons the template looks like server-side template injection."""
    found: list[str] = []
    for check in (_attribute_walks, _subscripts, _names, _calls, _filters, _strings, _imports):
        for reason in check(tree):
            if reason not in found:
                found.append(reason)
    return found[:MAX_EVIDENCE]


def _attribute_walks(tree: nodes.Template) -> Iterator[str]:
    for node in tree.find_all(nodes.Getattr):
        if node.attr.startswith("_"):
            yield f"line {node.lineno}: attribute {node.attr!r}"
        elif isinstance(node.node, nodes.Name) and node.node.name in GADGET_GLOBALS:
            yield f"line {node.lineno}: attribute walk {node.node.name}.{node.attr}"


def _subscripts(tree: nodes.Template) -> Iterator[str]:
    for node in tree.find_all(nodes.Getitem):
        key = node.arg
        if isinstance(key, nodes.Const) and isinstance(key.value, str) and key.value.startswith("_"):
            yield f"line {node.lineno}: subscript [{key.value!r}]"
        elif isinstance(key, nodes.Concat | nodes.Add | nodes.Mul | nodes.Filter) and _has_string(key):
            yield f"line {node.lineno}: subscript key built from string pieces"


def _names(tree: nodes.Template) -> Iterator[str]:
    for node in tree.find_all(nodes.Name):
        if node.name in DANGEROUS_NAMES:
            yield f"line {node.lineno}: name {node.name!r}"


def _calls(tree: nodes.Template) -> Iterator[str]:
    for node in tree.find_all(nodes.Call):
        func = node.node
        called = func.attr if isinstance(func, nodes.Getattr) else getattr(func, "name", None)
        if called in DANGEROUS_CALLS:
            yield f"line {node.lineno}: call to {called}()"


def _filters(tree: nodes.Template) -> Iterator[str]:
    for node in tree.find_all(nodes.Filter):
        if node.name == "attr":
            yield f"line {node.lineno}: |attr filter (attribute access by name)"


def _strings(tree: nodes.Template) -> Iterator[str]:
    for node in tree.find_all(nodes.Const):
        if isinstance(node.value, str) and _DUNDER_TEXT.search(node.value):
            yield f"line {node.lineno}: string {node.value[:40]!r} names a dunder"


def _imports(tree: nodes.Template) -> Iterator[str]:
    for node in tree.find_all((nodes.Import, nodes.FromImport, nodes.Include, nodes.Extends)):
        yield f"line {node.lineno}: {type(node).__name__.lower()} of another template"


def _has_string(node: nodes.Node) -> bool:
    return any(isinstance(c.value, str) for c in node.find_all(nodes.Const))
