"""A static upper bound on what rendering a chat template costs: steps and characters built.

transformers renders in jinja2's ``ImmutableSandboxedEnvironment``, whose only resource guard is
``range()`` refusing more than ``MAX_RANGE`` (100,000) items; llama.cpp (minja) and other
renderers have their own. Nothing bounds loops nested under the cap (``range(99999)`` inside
``range(99999)``), string repetition (``'a' * 10**8``, a ``set``/``namespace`` variable doubled
in a loop), ``|join`` of huge ranges, padding filters (``center(10**9)``), ``**`` on big
integers, or macros that call themselves. The template is never rendered: ``RenderCost`` walks
its AST once, with every loop's iteration count, every string's length and every macro's cost
bounded from above, for a chat of a realistic size. A template whose bound passes ``MAX_STEPS``
or ``MAX_CHARS`` is reported (``template-render-cost``, high).

The sizes, the bound on one value (``Est``) and its arithmetic are ``jinja_estimates``'s; what the
AST says about growth (self-feeding loop variables, shrinking recursion) is ``jinja_shapes``'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from jinja2 import nodes

from app.core.scanners.text_rules.jinja_estimates import (
    DATA,
    DATA_NUMBER,
    ITEMS,
    MESSAGES,
    RECURSION_DEPTH,
    TEXT,
    TOOLS,
    Est,
    const_of,
    element_of,
    field_of,
    format_widths,
    number_of,
    power,
    range_count,
    recursive_calls,
    sum_of,
    widest_of,
)
from app.core.scanners.text_rules.jinja_shapes import ARITHMETIC, growth, shrinks

MAX_STEPS = 10**8  # bound on evaluation steps (loop turns x work per turn)
MAX_CHARS = 10**8  # bound on characters of output or of any one string built
MAX_VISITS = 1_000_000  # AST nodes this bound may visit (macros are re-walked per call context)

_DATA_LISTS = {"messages": MESSAGES, "tools": TOOLS, "documents": ITEMS, "loop_messages": MESSAGES}
_PADDING_FILTERS = frozenset({"center", "indent", "wordwrap", "truncate"})
_PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})


@dataclass(frozen=True)
class Bound:
    steps: float
    chars: float
    reason: str | None  # why the bound passes a limit (the first construct seen to), else None


class _Unbounded(Exception):
    """The walk itself would pass its own budget: the template is too complex to bound."""


def render_cost(tree: nodes.Template) -> Bound:
    cost = RenderCost(tree)
    try:
        chars = cost.block(tree.body)
    except (_Unbounded, RecursionError, ArithmeticError, ValueError):
        return Bound(math.inf, math.inf, "too complex to bound statically (nesting or macro calls)")
    cost.check(chars, "output", 1)
    return Bound(cost.steps, chars, cost.reason)


class RenderCost:
    def __init__(self, tree: nodes.Template) -> None:
        self.macros = {m.name: m for m in tree.find_all(nodes.Macro)}
        self.env: dict[str, Est] = {}
        self.steps = 0.0
        self.mult = 1.0  # loop turns around the statement being walked
        self.reason: str | None = None
        self._visits = 0
        # (macro, argument size classes) -> one call's body, its recursive branching, whether it shrinks
        self._memo: dict[tuple[str, tuple[int, ...]], tuple[Est, float, bool]] = {}
        self._active: dict[str, float] = {}  # macros being walked -> recursive branching seen
        self._linear: dict[str, bool] = {}  # ... and whether every recursive call shrinks its data
        self._walking: list[str] = []  # macros being walked, innermost last
        self._outer_hits = 0  # calls that reached a macro being walked further out

    def check(self, value: float, what: str, lineno: int) -> None:
        limit = MAX_STEPS if what == "steps" else MAX_CHARS
        if not value < limit and self.reason is None:  # NaN (inf * 0) is no bound either
            shown = f"~{value:.1e}" if math.isfinite(value) else "unbounded"
            self.reason = f"line {lineno}: {shown} {'steps' if what == 'steps' else 'characters of ' + what}"

    def _charge(self, steps: float, lineno: int) -> None:
        self.steps += steps * self.mult
        self.check(self.steps, "steps", lineno)

    def _visit(self) -> None:
        self._visits += 1
        if self._visits > MAX_VISITS:
            raise _Unbounded

    # ---- statements: each returns the characters one execution outputs ---------------------
    def block(self, body: list[nodes.Node]) -> float:
        return sum(self.stmt(node) for node in body)

    def stmt(self, node: nodes.Node) -> float:
        self._visit()
        if isinstance(node, nodes.Output):
            return sum(self._printed(expr) for expr in node.nodes)
        if isinstance(node, nodes.For):
            return self._for(node)
        if isinstance(node, nodes.If):
            return self._if(node)
        if isinstance(node, nodes.Assign):
            self._assign(node.target, self.expr(node.node), node.lineno)
            self._namespace(node)
            return 0.0
        if isinstance(node, nodes.AssignBlock):
            self._assign(node.target, Est(chars=self.block(node.body)), node.lineno)
            return 0.0
        if isinstance(node, nodes.With):
            for target, value in zip(node.targets, node.values, strict=False):
                self._assign(target, self.expr(value), node.lineno)
            return self.block(node.body)
        if isinstance(node, nodes.CallBlock):
            return self._printed(node.call) + self.block(node.body)
        if isinstance(node, nodes.FilterBlock):
            inner = Est(chars=self.block(node.body))
            return self._filter(node.filter, inner).chars
        if isinstance(node, nodes.ExprStmt):
            self._charge(self.expr(node.node).steps, node.lineno)
            return 0.0
        if isinstance(node, nodes.Macro):
            return 0.0  # walked where it is called
        return self.block([c for c in node.iter_child_nodes() if isinstance(c, nodes.Stmt)])

    def _if(self, node: nodes.If) -> float:
        """One branch runs: the dearest one (in steps and in output) bounds the statement."""
        tests = [node.test, *(e.test for e in node.elif_)]
        self._charge(sum(self.expr(t).steps for t in tests), node.lineno)
        start, dearest, chars = self.steps, 0.0, 0.0
        for body in [node.body, *(e.body for e in node.elif_), node.else_]:
            self.steps = start
            chars = max(chars, self.block(body))
            dearest = max(dearest, self.steps - start)
        self.steps = start + dearest
        return chars

    def _printed(self, expr: nodes.Expr) -> float:
        est = self.expr(expr)
        self._charge(est.steps, expr.lineno)
        return est.chars

    def _for(self, node: nodes.For) -> float:
        source = self.expr(node.iter)
        self._charge(source.steps, node.lineno)
        turns = source.items * (RECURSION_DEPTH if node.recursive else 1)
        self._assign(node.target, element_of(source), node.lineno)
        before, outer = dict(self.env), self.mult
        self.mult = outer * max(turns, 1.0)
        try:
            chars = self.block(node.body) * turns
        finally:
            self.mult = outer
        self._grow(before, growth(node.body), turns, node.lineno)
        return chars + self.block(node.else_)

    def _grow(self, before: dict[str, Est], factors: dict[str, float], turns: float, lineno: int) -> None:
        """A variable set from itself in a loop grows every turn (conservative: jinja2 scopes a
        plain ``set`` to one turn; a namespace attribute and other renderers keep it): by what
        one turn added (``s = s ~ x``), or by its factor per turn (``s = s ~ s``: 2)."""
        for name, factor in factors.items():
            after, old = self.env.get(name), before.get(name, Est(chars=0.0))
            if after is None or after.chars <= old.chars:
                continue
            if factor > 1:
                grown = power(max(after.chars, 1.0), factor, turns - 1)
            else:
                grown = old.chars + (after.chars - old.chars) * turns
            self.env[name] = replace(after, chars=grown, items=max(after.items, grown))
            self.check(grown, f"variable {name!r}", lineno)

    def _namespace(self, node: nodes.Assign) -> None:
        """``ns = namespace(s='a')`` seeds ``ns.s``, so its growth in a loop is followed."""
        call = node.node
        if isinstance(node.target, nodes.Name) and isinstance(call, nodes.Call) and \
                isinstance(call.node, nodes.Name) and call.node.name == "namespace":
            for kw in call.kwargs:
                self.env[f"{node.target.name}.{kw.key}"] = self.expr(kw.value)

    def _assign(self, target: nodes.Node, value: Est, lineno: int) -> None:
        self._charge(value.steps, lineno)
        self.check(value.chars, "a string it builds", lineno)
        if isinstance(target, nodes.Name):
            self.env[target.name] = value
        elif isinstance(target, nodes.NSRef):
            self.env[f"{target.name}.{target.attr}"] = value
        elif isinstance(target, nodes.Tuple):
            for item in target.items:
                self._assign(item, element_of(value), lineno)

    # ---- expressions ----------------------------------------------------------------------
    def expr(self, node: nodes.Node) -> Est:
        self._visit()
        est = self._expr(node)
        self.check(est.chars, "a string it builds", node.lineno)
        return est

    def _expr(self, node: nodes.Node) -> Est:
        if isinstance(node, nodes.Const):
            return const_of(node.value)
        if isinstance(node, nodes.TemplateData):
            return Est(chars=len(node.data), items=len(node.data))
        if isinstance(node, nodes.Name):
            return self._name(node.name)
        if isinstance(node, nodes.Getattr):
            return self._getattr(node)
        if isinstance(node, nodes.Getitem):
            return self._getitem(node)
        if isinstance(node, nodes.Concat):
            return sum_of([self.expr(n) for n in node.nodes])
        if isinstance(node, ARITHMETIC):
            return self._arithmetic(node)
        if isinstance(node, nodes.Filter):
            return self._filter(node, self.expr(node.node) if node.node is not None else DATA)
        if isinstance(node, nodes.Call):
            return self._call(node)
        if isinstance(node, nodes.CondExpr):
            branches = [self.expr(node.expr1), self.expr(node.expr2) if node.expr2 else Est()]
            return widest_of(branches, self.expr(node.test).steps)
        if isinstance(node, nodes.List | nodes.Tuple):
            parts = [self.expr(i) for i in node.items]
            total = sum_of(parts)
            return replace(total, items=len(parts), chars=total.chars + 2 * len(parts))
        if isinstance(node, nodes.Dict):
            return replace(sum_of([self.expr(v) for p in node.items for v in (p.key, p.value)]), items=len(node.items))
        parts = [self.expr(c) for c in node.iter_child_nodes() if isinstance(c, nodes.Expr)]
        steps = sum(p.steps for p in parts) + 1
        return widest_of(parts, steps) if isinstance(node, nodes.And | nodes.Or) else Est(steps=steps, chars=5)

    def _name(self, name: str) -> Est:
        if name in self.env:
            return replace(self.env[name], steps=1.0)  # computed where it was set
        if name in _DATA_LISTS:
            return Est(chars=_DATA_LISTS[name] * TEXT, items=_DATA_LISTS[name])
        return DATA

    def _getattr(self, node: nodes.Getattr) -> Est:
        if isinstance(node.node, nodes.Name):
            key = f"{node.node.name}.{node.attr}"
            if key in self.env:
                return replace(self.env[key], steps=1.0)
            if node.node.name == "loop":
                return Est(chars=5, number=MESSAGES)
        return field_of(self.expr(node.node))

    def _getitem(self, node: nodes.Getitem) -> Est:
        subject = self.expr(node.node)
        if isinstance(node.arg, nodes.Slice):
            return replace(subject, steps=subject.steps + subject.items)  # a slice copies items
        key = self.expr(node.arg)
        if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            return field_of(subject)  # message['content']: a part of the message
        return replace(element_of(subject), steps=subject.steps + key.steps + 1)  # messages[i]: one item

    def _arithmetic(self, node: nodes.BinExpr) -> Est:
        left, right = self.expr(node.left), self.expr(node.right)
        steps = left.steps + right.steps
        if isinstance(node, nodes.Mul) and (left.number is None or right.number is None):
            text, count = (left, right) if left.number is None else (right, left)
            times = count.number if count.number is not None else DATA_NUMBER
            return Est(chars=text.chars * times, items=text.items * times, steps=steps + 1)
        if isinstance(node, nodes.Mod) and left.number is None:  # printf-style formatting
            width = format_widths(node.left)
            return Est(chars=left.chars + right.chars + width, steps=steps + 1)
        if left.number is None or right.number is None:  # string +, or data
            return sum_of([left, right])
        number = number_of(node, left.number, right.number)
        digits = math.log10(number + 1) + 1 if math.isfinite(number) else math.inf
        return Est(chars=digits, number=number, steps=steps + 1)

    def _filter(self, node: nodes.Filter, subject: Est) -> Est:
        args = [self.expr(a) for a in node.args] + [self.expr(k.value) for k in node.kwargs]
        steps = subject.steps + sum(a.steps for a in args)
        if node.name == "join":
            separator = args[0].chars if args else 0.0
            chars = subject.chars + subject.items * separator
        elif node.name in _PADDING_FILTERS:
            width = max((a.number if a.number is not None else DATA_NUMBER for a in args[:1]), default=4.0)
            chars = subject.chars * (1 + width) if node.name == "indent" else max(subject.chars, width)
        elif node.name == "replace" and len(args) >= 2:
            chars = subject.chars * max(1.0, args[1].chars) + args[1].chars
        elif node.name == "tojson":
            chars = subject.chars * (2 + max((a.number or 0.0 for a in args), default=0.0))
        elif node.name in ("length", "count", "int", "float", "sum", "abs", "round", "wordcount"):
            return Est(chars=20, steps=steps + subject.items, number=subject.items)
        elif node.name in ("e", "escape", "forceescape", "urlencode"):
            chars = subject.chars * 6
        elif node.name == "format":
            chars = subject.chars + sum(a.chars for a in args) + format_widths(node.node)
        elif node.name == "default" and args:
            return widest_of([subject, args[0]], steps)
        else:
            chars = subject.chars + sum(a.chars for a in args)
        return Est(chars=chars, items=max(subject.items, 1.0), steps=steps + subject.items)

    def _call(self, node: nodes.Call) -> Est:
        args = [self.expr(a) for a in node.args] + [self.expr(k.value) for k in node.kwargs]
        steps = sum(a.steps for a in args) + 1
        func = node.node
        if isinstance(func, nodes.Getattr):
            return self._method(func, self.expr(func.node), args, steps)
        name = func.name if isinstance(func, nodes.Name) else None
        if name == "range":
            bounds = [a.number if a.number is not None else DATA_NUMBER for a in args]
            count = range_count(bounds)
            return Est(chars=count * (math.log10(count + 1) + 3), items=count, steps=steps + count)
        if name == "lipsum":
            paragraphs = args[0].number if args and args[0].number is not None else 5.0
            return Est(chars=paragraphs * 1_000, steps=steps + paragraphs)
        if name is not None and name in self.macros:
            macro = self._macro_call(name, node, args)
            self._charge(macro.steps, node.lineno)
            return replace(macro, steps=steps)
        return replace(DATA, steps=steps)

    def _method(self, func: nodes.Getattr, subject: Est, args: list[Est], steps: float) -> Est:
        steps += subject.steps
        if func.attr == "join" and args:
            chars = args[0].chars + args[0].items * subject.chars
        elif func.attr == "replace" and len(args) >= 2:
            chars = subject.chars * max(1.0, args[1].chars) + args[1].chars
        elif func.attr in _PADDING_METHODS:
            width = args[0].number if args and args[0].number is not None else DATA_NUMBER
            chars = subject.chars * width if func.attr == "expandtabs" else max(subject.chars, width)
        else:
            chars = subject.chars + sum(a.chars for a in args)
        return Est(chars=chars, items=max(subject.items, 1.0), steps=steps + subject.items)

    # ---- macros ---------------------------------------------------------------------------
    def _macro_call(self, name: str, call: nodes.Call, args: list[Est]) -> Est:
        """One call's cost, recursion included: a macro recursing on parts of its argument visits
        the argument's items; one recursing otherwise goes as deep as the stack allows."""
        if name in self._active:
            if name != self._walking[-1]:
                self._outer_hits += 1  # mutual recursion: the macros walked since then depend on it
            self._active[name] += self.mult
            self._linear[name] = self._linear[name] and shrinks(call, self.macros[name])
            return Est(chars=0.0, steps=0.0)
        key = (name, tuple(round(math.log2(a.chars + 1)) if math.isfinite(a.chars) else -1 for a in args))
        body, branching, linear = self._memo[key] if key in self._memo else self._walk_macro(key, call, args)
        calls = recursive_calls(branching, linear, max((a.chars for a in args), default=1.0))
        return Est(chars=body.chars * calls, steps=body.steps * calls)

    def _walk_macro(self, key: tuple[str, tuple[int, ...]], call: nodes.Call,
                    args: list[Est]) -> tuple[Est, float, bool]:
        """One call's body, its parameters bound to the call's arguments (by size class)."""
        name = key[0]
        saved_steps, saved_mult, saved_env, hits = self.steps, self.mult, self.env, self._outer_hits
        self._walking.append(name)
        self._active[name], self._linear[name] = 0.0, True
        self.steps, self.mult, self.env = 0.0, 1.0, dict(saved_env)
        params = [a.name for a in self.macros[name].args]
        named = dict(zip([k.key for k in call.kwargs], args[len(call.args):], strict=False))
        for position, param in enumerate(params):
            self.env[param] = args[position] if position < len(call.args) else named.get(param, DATA)
        try:
            chars = self.block(self.macros[name].body)
            body = Est(chars=chars, steps=self.steps + 1)
        finally:
            branching, linear = self._active.pop(name), self._linear.pop(name)
            self.steps, self.mult, self.env = saved_steps, saved_mult, saved_env
            self._walking.pop()
        if self._outer_hits == hits:
            self._memo[key] = (body, branching, linear)  # reached no macro still being walked
        return body, branching, linear
