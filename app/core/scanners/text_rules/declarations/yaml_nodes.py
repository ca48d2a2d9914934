"""YAML composed, never constructed: node trees with line numbers, bounded.

``yaml.compose_all`` builds nodes only (no tags run, no objects built), and an alias is the same
node object again, so a "billion laughs" document stays one small graph; ``walk`` visits each node
once. libyaml's composer (CSafeLoader, a tenth of the time) recurses in C without a limit and
crashes the process on deep nesting, so a cheap upper bound of the nesting is checked first and
deeper text is refused rather than parsed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml

MAX_DEPTH = 400  # nesting bound: real configs stay far below; libyaml crashes somewhere above 10^4
MAX_NODES = 200_000  # nodes visited per file by ``walk``
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_INDICATOR = re.compile(r"[-?:](?=\s|$)")
_BRACKET = re.compile(r"[\[\]{}]")


class YamlUnreadable(ValueError):
    """The text is not YAML this module will read (syntax error or nesting beyond MAX_DEPTH)."""


def documents(text: str) -> list[yaml.Node]:
    """The root node of every document (Kubernetes files hold several, split by ``---``)."""
    depth = nesting_bound(text)
    if depth > MAX_DEPTH:
        raise YamlUnreadable(f"nesting up to {depth} levels exceeds {MAX_DEPTH}")
    try:
        return [node for node in yaml.compose_all(text, Loader=_Loader) if node is not None]
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        raise YamlUnreadable(f"not valid YAML: {str(exc)[:200]}") from exc


def nesting_bound(text: str) -> int:
    """An upper bound of how deep the YAML nests: per line its indentation plus every indicator
    that can open a block level on it (``- ``, ``? ``, ``: ``), plus the flow brackets open at
    that point (counted across lines and inside quotes and comments, which only raises the bound:
    at worst a strange file is refused)."""
    deepest = brackets = 0
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        deepest = max(deepest, indent + len(_INDICATOR.findall(line)) + brackets)
        for match in _BRACKET.finditer(line):
            brackets = brackets + 1 if match.group() in "[{" else max(brackets - 1, 0)
            deepest = max(deepest, indent + brackets)
    return deepest


def line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def scalar(node: yaml.Node | None) -> str | None:
    """A scalar's text (numbers and booleans as written), None for mappings, lists or nothing."""
    if isinstance(node, yaml.ScalarNode):
        return str(node.value)
    return None


def mapping(node: yaml.Node | None) -> dict[str, yaml.Node]:
    """A mapping's scalar keys to their value nodes; {} for anything else. A key written twice
    keeps its last value, as PyYAML's and most tools' loaders do."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    pairs: dict[str, yaml.Node] = {}
    for key, value in node.value:
        name = scalar(key)
        if name is not None:
            pairs[name] = value
    return pairs


def items(node: yaml.Node | None) -> list[yaml.Node]:
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def walk(roots: list[yaml.Node]) -> Iterator[tuple[str, yaml.Node, yaml.Node]]:
    """(key, value node, mapping node) of every mapping entry with a scalar key, each node once."""
    seen: set[int] = set()
    stack = list(reversed(roots))
    visited = 0
    while stack and visited < MAX_NODES:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        visited += 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = scalar(key)
                if name is not None:
                    yield name, value, node
            stack.extend(value for _key, value in reversed(node.value))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
