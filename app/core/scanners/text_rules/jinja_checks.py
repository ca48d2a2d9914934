"""Static checks of a Jinja chat template: parse to an AST (never render) and look for SSTI.

Chat templates only need loops, conditionals, string building and a few helpers
(``raise_exception``, ``tojson``, ``strftime_now``, ``namespace``). Reaching Python
internals needs attribute walks (``__class__``, ``__globals__``...), underscore names the
sandbox hides, computed attribute names, or template imports, and those are what is flagged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import jinja2
import jinja2.ext
from jinja2 import nodes
from jinja2.parser import Parser

from app.core.scanners.text_rules.jinja_flow import Flow
from app.core.scanners.text_rules.jinja_fold import Folder, strings

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
# Filters that read an attribute named by an argument (jinja2's make_attrgetter): attribute access.
_ATTRIBUTE_FILTERS = frozenset({"map", "selectattr", "rejectattr", "sort", "groupby", "sum", "unique", "min",
                                "max", "dictsort"})
_POSITIONAL_ATTRIBUTE = frozenset({"selectattr", "rejectattr", "groupby"})
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


class _Nodes:
    """Every node of a template, walked once: the checks filter this list instead of re-walking."""

    def __init__(self, tree: nodes.Template) -> None:
        self.root = tree
        self._all = [tree, *tree.find_all(nodes.Node)]
        self.flow = Flow(self._all)

    def find_all(self, kinds: type[nodes.Node] | tuple[type[nodes.Node], ...]) -> Iterator[Any]:
        return (node for node in self._all if isinstance(node, kinds))


def injection_evidence(template: nodes.Template) -> list[str]:
    """Human-readable reasons the template looks like server-side template injection."""
    found: list[str] = []
    folder = Folder(template)
    tree = _Nodes(template)
    checks = (_attribute_walks, _subscripts, _names, _calls, _filters, _strings, _template_text, _imports)
    folded = (_built_strings, _built_keys, _attribute_filters, _aliases)
    reasons = [check(tree) for check in checks] + [check(tree, folder) for check in folded]
    for found_by_check in reasons:
        for reason in found_by_check:
            if reason not in found:
                found.append(reason)
    return found[:MAX_EVIDENCE]


def _attribute_walks(tree: _Nodes) -> Iterator[str]:
    for node in tree.find_all(nodes.Getattr):
        if node.attr.startswith("_"):
            yield f"line {node.lineno}: attribute {node.attr!r}"
        elif isinstance(node.node, nodes.Name) and node.node.name in GADGET_GLOBALS:
            yield f"line {node.lineno}: attribute walk {node.node.name}.{node.attr}"


def _subscripts(tree: _Nodes) -> Iterator[str]:
    for node in tree.find_all(nodes.Getitem):
        key = node.arg
        if isinstance(key, nodes.Const) and isinstance(key.value, str) and key.value.startswith("_"):
            yield f"line {node.lineno}: subscript [{key.value!r}]"
        elif isinstance(key, nodes.Concat | nodes.Add | nodes.Mul | nodes.Filter) and _has_string(key):
            yield f"line {node.lineno}: subscript key built from string pieces"


def _names(tree: _Nodes) -> Iterator[str]:
    """A Python module or builtin's name read where the template never set it (``{% set sys =
    'system' %}`` makes ``sys`` the template's own variable, which is what Jinja reads then)."""
    own = _root_variables(tree.root.body)
    for node in tree.find_all(nodes.Name):
        if node.name in DANGEROUS_NAMES and node.name not in own:
            yield f"line {node.lineno}: name {node.name!r}"


def _calls(tree: _Nodes) -> Iterator[str]:
    for node in tree.find_all(nodes.Call):
        func = node.node
        called = func.attr if isinstance(func, nodes.Getattr) else getattr(func, "name", None)
        if called in DANGEROUS_CALLS:
            yield f"line {node.lineno}: call to {called}()"


def _filters(tree: _Nodes) -> Iterator[str]:
    for node in tree.find_all(nodes.Filter):
        if node.name == "attr":
            yield f"line {node.lineno}: |attr filter (attribute access by name)"


def _strings(tree: _Nodes) -> Iterator[str]:
    """A literal naming a dunder, when it can reach an attribute lookup (prose and labels cannot)."""
    for node in tree.find_all(nodes.Const):
        if isinstance(node.value, str) and _DUNDER_TEXT.search(node.value) and tree.flow.reaches_sink(node):
            yield f"line {node.lineno}: string {node.value[:40]!r} names a dunder"


def _template_text(tree: _Nodes) -> Iterator[str]:
    """Template text naming a dunder that a block captures into a value (``{% set k %}__class__``)."""
    for node in tree.find_all(nodes.TemplateData):
        if _DUNDER_TEXT.search(node.data) and tree.flow.reaches_sink(node):
            yield f"line {node.lineno}: template text {node.data.strip()[:40]!r} captured as a name"


def _root_variables(body: list[nodes.Node]) -> set[str]:
    """Names a ``set`` binds in the template's own scope (``if`` opens no scope; loops, macros,
    ``with`` and blocks do, and outside them the name is the global again)."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, nodes.Assign | nodes.AssignBlock):
            target = node.target
            names |= {target.name} if isinstance(target, nodes.Name) else {n.name for n in target.find_all(nodes.Name)}
        elif isinstance(node, nodes.If):
            for branch in (node.body, *(e.body for e in node.elif_), node.else_):
                names |= _root_variables(branch)
    return names


def _imports(tree: _Nodes) -> Iterator[str]:
    for node in tree.find_all((nodes.Import, nodes.FromImport, nodes.Include, nodes.Extends)):
        yield f"line {node.lineno}: {type(node).__name__.lower()} of another template"


def _built_strings(tree: _Nodes, folder: Folder) -> Iterator[str]:
    """Strings the template builds at render time (``'_' * 2 ~ 'class'``, ``|join``, ``%``...) that
    can reach an attribute lookup (``jinja_flow``)."""
    if folder.exhausted:
        yield "builds more string combinations than hfvet folds: what it builds is unknown"
        return
    for node in tree.find_all(nodes.Expr):
        if isinstance(node, nodes.Const) or not tree.flow.reaches_sink(node):
            continue  # what only becomes output text or a label is data, whatever it spells
        for text in strings(folder.fold(node)):
            if _DUNDER_TEXT.search(text) or text in DANGEROUS_NAMES or text in DANGEROUS_CALLS:
                yield f"line {node.lineno}: expression builds {text[:40]!r}"
                break


def _built_keys(tree: _Nodes, folder: Folder) -> Iterator[str]:
    """``x[key]`` is attribute access in Jinja: a key built to a private name is an attribute walk."""
    for node in tree.find_all(nodes.Getitem):
        if not isinstance(node.arg, nodes.Const):
            for key in strings(folder.fold(node.arg)):
                if key.startswith("_"):
                    yield f"line {node.lineno}: subscript key builds {key[:40]!r}"
                    break


def _attribute_filters(tree: _Nodes, folder: Folder) -> Iterator[str]:
    for node in tree.find_all(nodes.Filter):
        if node.name not in _ATTRIBUTE_FILTERS:
            continue
        if node.name == "map" and node.args and "attr" in strings(folder.fold(node.args[0])):
            yield f"line {node.lineno}: |map('attr', ...) (attribute access by name)"
            continue
        named = [kw.value for kw in node.kwargs if kw.key == "attribute"]
        named += node.args[:1] if node.name in _POSITIONAL_ATTRIBUTE else []
        for value in named:
            for attribute in strings(folder.fold(value)):
                if any(part.startswith("_") for part in attribute.split(".")):
                    yield f"line {node.lineno}: |{node.name} reads attribute {attribute[:40]!r}"


def _aliases(tree: _Nodes, folder: Folder) -> Iterator[str]:
    """``{% set c = cycler %}`` then ``c.x``: a gadget global reached under another name."""
    del folder
    aliases = {a.target.name: a.node.name for a in tree.find_all(nodes.Assign)
               if isinstance(a.target, nodes.Name) and isinstance(a.node, nodes.Name)
               and (a.node.name in GADGET_GLOBALS or a.node.name in DANGEROUS_NAMES)}
    for node in tree.find_all(nodes.Getattr):
        if isinstance(node.node, nodes.Name) and node.node.name in aliases:
            yield f"line {node.lineno}: attribute walk {aliases[node.node.name]}.{node.attr} via {node.node.name!r}"


def _has_string(node: nodes.Node) -> bool:
    return any(isinstance(c.value, str) for c in node.find_all(nodes.Const))
