"""Upper bounds on one value a chat template evaluates (``Est``), for a chat of a realistic size
(the constants below), and the arithmetic ``jinja_cost.RenderCost`` combines them with.

Data a template reads (messages, tools, their fields) is not the template author's to choose and
counts at these sizes; numbers the template computes from constants count at their value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from jinja2 import nodes

# A realistic chat: what one render of an ordinary template is charged for.
MESSAGES = 1_000  # messages in the conversation
TOOLS = 100  # tool definitions
ITEMS = 100  # items of any other collection the data holds (content parts, tool calls, properties)
TEXT = 4_000  # characters of one message or tool definition (about 1,000 tokens)
ITEM_CHARS = 20  # fewest characters of one item of data (``{"type": "string"}``)
DATA_NUMBER = 1_000  # a number read from data (a length, an index, an indent)
RECURSION_DEPTH = 250  # nested macro calls before Python's recursion limit stops a render


@dataclass(frozen=True)
class Est:
    """Upper bounds for one evaluation of an expression."""

    chars: float = 1.0  # characters when printed or joined
    items: float = 1.0  # items when iterated (a string: its characters)
    steps: float = 1.0  # work to evaluate it, the output it copies included
    number: float | None = None  # |value|, when it is a number the template computes


DATA = Est(chars=TEXT, items=ITEMS, steps=1.0)


def recursive_calls(branching: float, linear: bool, size: float) -> float:
    if branching == 0:
        return 1.0
    if linear:  # each level's arguments are disjoint parts of the first: ~ one body per level
        return min(float(RECURSION_DEPTH), 1.0 + math.log2(max(1.0, size / ITEM_CHARS)))
    return float(RECURSION_DEPTH) if branching <= 1 else power(1.0, branching, RECURSION_DEPTH)


def field_of(subject: Est) -> Est:
    """A field of a data value: at most the whole value, holding as many items as its size allows."""
    return Est(chars=subject.chars, items=items_in(subject.chars), steps=subject.steps + 1)


def const_of(value: object) -> Est:
    if isinstance(value, bool) or value is None:
        return Est(chars=5)
    if isinstance(value, int | float):
        return Est(chars=len(str(value)), number=abs(float(value)))
    text = str(value)
    return Est(chars=len(text), items=len(text))


def element_of(source: Est) -> Est:
    """One item of what a loop iterates: a share of the whole, or a data item."""
    if source.number is not None:
        return Est(chars=20, number=source.items)
    share = source.chars / max(source.items, 1.0)
    return Est(chars=max(share, 1.0), items=items_in(share), number=source.items if share < 8 else None)


def items_in(chars: float) -> float:
    """Items a data value of ``chars`` characters can hold (a JSON item takes some characters)."""
    return max(1.0, min(float(ITEMS), chars / ITEM_CHARS))


def sum_of(parts: list[Est]) -> Est:
    return Est(chars=sum(p.chars for p in parts), items=sum(p.items for p in parts),
               steps=sum(p.steps for p in parts) + 1)


def widest_of(parts: list[Est], steps: float) -> Est:
    widest = max(parts, key=lambda p: p.chars, default=Est())
    return replace(widest, steps=steps + max((p.steps for p in parts), default=0.0))


def number_of(node: nodes.BinExpr, left: float, right: float) -> float:
    if isinstance(node, nodes.Pow):
        if left <= 1:
            return 1.0
        return math.inf if right * math.log10(left) > 300 else float(left**right)
    if isinstance(node, nodes.Mul):
        return left * right
    if isinstance(node, nodes.Add | nodes.Sub):
        return left + right
    if isinstance(node, nodes.Mod):
        return right
    return left  # / and //: never larger than the dividend in magnitude (divisor >= 1 or an error)


def range_count(bounds: list[float]) -> float:
    if len(bounds) == 1:
        return bounds[0]
    start, stop = bounds[0], bounds[1]
    step = max(bounds[2], 1.0) if len(bounds) > 2 else 1.0
    return (start + stop) / step  # |stop - start| <= |stop| + |start|: magnitudes only


def format_widths(node: nodes.Node | None) -> float:
    """Widths and precisions written in a constant printf-style format (``'%099999999d'``)."""
    if not isinstance(node, nodes.Const) or not isinstance(node.value, str):
        return 0.0
    total, digits = 0.0, ""
    for char in node.value + " ":
        if char.isdigit():
            digits += char
        elif digits:
            total += float(digits)
            digits = ""
    return total


def power(start: float, ratio: float, times: float) -> float:
    if ratio <= 1:
        return start
    exponent = times * math.log10(ratio) + math.log10(max(start, 1.0))
    return math.inf if exponent > 300 else float(10**exponent)
