"""Where a string a chat template holds or builds can go: output text, or an attribute name.

A dunder or a command name in a template is only a way into Python internals when it reaches a
place where Jinja turns a string into attribute access: a subscript key (``x[k]`` falls back to
``getattr``), the ``attr`` filter and the filters that read attributes by name (``map``,
``selectattr``, ``sort``...), a ``str.format`` string (``{0.__class__}``), or code hfvet cannot
follow (a callable it does not know). Printed text, comparisons, tests and role labels are data:
``{% set role = 'sys' ~ 'tem' %}<|{{ role }}|>`` or prose that mentions ``__init__`` is not an
exploit.

``Flow`` builds the value-flow graph of one template once (expression -> the expression or
variable that carries its value on) and marks, by one backward walk from the sinks, every node
whose value can reach one. Variables are followed by name (``set``, ``for`` targets, ``with``,
namespace attributes, macro parameters, ``{% set %}`` blocks), and a macro's output flows to its
calls, without scoping: coarse, so a value that might reach a sink is counted as reaching it.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterator

from jinja2 import nodes

SINK = "<sink>"
ATTRIBUTE_FILTERS = frozenset({"attr", "map", "selectattr", "rejectattr", "sort", "groupby", "sum", "unique",
                               "min", "max", "dictsort"})
# Callables whose arguments only ever become text or nothing (transformers' template globals).
INERT_CALLS = frozenset({"raise_exception", "strftime_now", "range", "lipsum"})
# Callables that keep their arguments inside the object they return.
HOLDING_CALLS = frozenset({"namespace", "dict", "cycler", "joiner"})
_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add"})
_FORMAT_METHODS = frozenset({"format", "format_map"})
_BOOLEAN = (nodes.Compare, nodes.Operand, nodes.Test, nodes.Not, nodes.If, nodes.Slice)
_CARRIERS = (nodes.Concat, nodes.BinExpr, nodes.UnaryExpr, nodes.And, nodes.Or, nodes.List, nodes.Tuple,
             nodes.Dict, nodes.Pair, nodes.Keyword, nodes.MarkSafe, nodes.MarkSafeIfAutoescape)

Key = int | str | tuple[str, str]


class Flow:
    def __init__(self, every: list[nodes.Node]) -> None:
        self._parent: dict[int, nodes.Node] = {}
        for node in every:
            for child in node.iter_child_nodes():
                self._parent[id(child)] = node
        self._macros = {m.name: m for m in every if isinstance(m, nodes.Macro)}
        feeds: dict[Key, set[Key]] = defaultdict(set)  # target -> what flows into it
        for node in every:
            for target in self._successors(node):
                feeds[target].add(id(node))
            if isinstance(node, nodes.Name) and node.ctx == "load":
                feeds[id(node)].add(("var", node.name))
            if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Name):
                feeds[id(node)].add(("macro", node.node.name))
        self._reaching = _backwards(feeds, SINK)

    def reaches_sink(self, node: nodes.Node) -> bool:
        return id(node) in self._reaching

    # ---- one step of value flow ----------------------------------------------------------
    def _successors(self, node: nodes.Node) -> Iterator[Key]:
        parent = self._parent.get(id(node))
        if parent is None or isinstance(parent, _BOOLEAN):
            return
        if isinstance(parent, nodes.CallBlock) and node is not parent.call:
            yield from (("var", a.name) for a in parent.args)  # a default of ``caller``'s parameters
        elif isinstance(parent, nodes.Output | nodes.CallBlock | nodes.FilterBlock):
            yield from self._captured(parent)  # printed (a call block prints its macro's result)
        elif isinstance(parent, nodes.CondExpr):
            if node is not parent.test:
                yield id(parent)
        elif isinstance(parent, _CARRIERS):
            yield id(parent)
        elif isinstance(parent, nodes.Getattr):
            yield SINK if parent.attr in _FORMAT_METHODS else id(parent)
        elif isinstance(parent, nodes.Getitem):
            yield SINK if node is parent.arg else id(parent)
        elif isinstance(parent, nodes.Filter):
            yield SINK if node is not parent.node and parent.name in ATTRIBUTE_FILTERS else id(parent)
        elif isinstance(parent, nodes.Call):
            yield from self._call(parent, node)
        else:
            yield from self._statement(parent, node)

    def _call(self, call: nodes.Call, node: nodes.Node) -> Iterator[Key]:
        func = call.node
        if node is func:
            yield id(call)
            return
        if isinstance(func, nodes.Getattr):  # a method: its result may carry the value on
            if func.attr in _MUTATORS and isinstance(func.node, nodes.Name):
                yield ("var", func.node.name)
            yield id(call)
            return
        name = func.name if isinstance(func, nodes.Name) else None
        if name in INERT_CALLS:
            return
        if name in HOLDING_CALLS:
            yield id(call)
        elif name in self._macros:
            yield from self._parameters(self._macros[name], call, node)
        else:
            yield SINK  # a callable hfvet does not follow (``caller``, an alias, an undefined name)

    def _parameters(self, macro: nodes.Macro, call: nodes.Call, node: nodes.Node) -> Iterator[Key]:
        params = [a.name for a in macro.args]
        position = next((i for i, arg in enumerate(call.args) if arg is node), len(params))
        if isinstance(node, nodes.Keyword) and node.key in params:
            yield ("var", node.key)
        elif position < len(params):
            yield ("var", params[position])
        else:  # *args, **kwargs, or more arguments than parameters: any of them
            yield from (("var", p) for p in [*params, "varargs", "kwargs"])

    def _statement(self, parent: nodes.Node, node: nodes.Node) -> Iterator[Key]:
        if isinstance(parent, nodes.For):
            if node is parent.iter:
                yield from _targets(parent.target)
        elif isinstance(parent, nodes.Assign):
            yield from _targets(parent.target)
        elif isinstance(parent, nodes.With):
            for target, value in zip(parent.targets, parent.values, strict=False):
                if value is node:
                    yield from _targets(target)
        elif isinstance(parent, nodes.Macro):
            yield from (("var", a.name) for a in parent.args)
        elif isinstance(parent, nodes.ExprStmt):
            return  # ``{% do %}`` discards the result
        elif not isinstance(parent, nodes.Scope):
            yield SINK  # a use this graph does not model (an import's name...): counted as a sink

    def _captured(self, output: nodes.Node) -> Iterator[Key]:
        """Printed text is data, unless a block captures it as a value: ``{% set x %}``, a macro's
        body (its calls return it), a ``{% call %}`` body (``caller()`` returns it)."""
        node: nodes.Node | None = output
        while node is not None:
            node = self._parent.get(id(node))
            if isinstance(node, nodes.AssignBlock):
                yield from _targets(node.target)
                return
            if isinstance(node, nodes.Macro):
                yield ("macro", node.name)
                return
            if isinstance(node, nodes.CallBlock):
                yield ("macro", "caller")
                return


def _targets(target: nodes.Node) -> Iterator[Key]:
    if isinstance(target, nodes.Name):
        yield ("var", target.name)
    elif isinstance(target, nodes.NSRef):
        yield ("var", target.name)  # ``ns.attr`` reads go through the namespace's name
    elif isinstance(target, nodes.Tuple):
        for item in target.items:
            yield from _targets(item)


def _backwards(feeds: dict[Key, set[Key]], start: Key) -> set[Key]:
    seen: set[Key] = {start}
    queue: deque[Key] = deque([start])
    while queue:
        for source in feeds.get(queue.popleft(), ()):
            if source not in seen:
                seen.add(source)
                queue.append(source)
    return seen
