"""What a chat template's AST says about growth before any bound is computed: which variables a
loop body feeds back into themselves, and which recursive macro calls walk down their data."""

from __future__ import annotations

from jinja2 import nodes

ARITHMETIC = (nodes.Add, nodes.Sub, nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod, nodes.Pow)


def shrinks(call: nodes.Call, macro: nodes.Macro) -> bool:
    """Every argument is a part of something (``x.items``, ``x[k]``, an item a loop in the macro
    takes) and none is computed by arithmetic: the recursion walks down the data and ends with it."""
    items = {n.name for loop in macro.find_all(nodes.For) for n in loop.target.find_all(nodes.Name)}
    args = [*call.args, *(k.value for k in call.kwargs)]
    return bool(args) and all(
        not any(True for _ in a.find_all(ARITHMETIC))
        and (isinstance(a, nodes.Getattr | nodes.Getitem | nodes.Filter)
             or (isinstance(a, nodes.Name) and a.name in items))
        for a in args)


def growth(body: list[nodes.Node]) -> dict[str, float]:
    """Variables a loop body sets from themselves -> how many copies of the old value the new one
    holds (2 for ``s ~ s``; 2 at least when repeated or padded: ``s * 3``, ``s|join``)."""
    factors: dict[str, float] = {}
    for stmt in body:
        for assign in stmt.find_all(nodes.Assign) if not isinstance(stmt, nodes.Assign) else [stmt]:
            key = target_key(assign.target)
            uses = [n for n in assign.node.find_all((nodes.Name, nodes.Getattr)) if target_key(n) == key]
            if key is None or not uses:
                continue
            amplified = any(True for _ in assign.node.find_all((nodes.Mul, nodes.Filter, nodes.Call)))
            copies = float(len(uses)) if len(uses) > 1 else (2.0 if amplified else 1.0)
            factors[key] = max(factors.get(key, 0.0), copies)
    return factors


def target_key(node: nodes.Node) -> str | None:
    if isinstance(node, nodes.Name):
        return node.name
    if isinstance(node, nodes.NSRef | nodes.Getattr) and isinstance(getattr(node, "node", None), nodes.Name):
        return f"{node.node.name}.{node.attr}"  # type: ignore[union-attr]
    if isinstance(node, nodes.NSRef):
        return f"{node.name}.{node.attr}"
    return None
