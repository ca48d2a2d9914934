"""Shell text as tree-sitter-bash reads it, with the grammar's known misreadings put right.

tree-sitter-bash 0.25.1 has open issues that would let a command hide: after a pipeline of two or more
stages a newline is not always a separator, so the next line's command becomes arguments of the last
stage (tree-sitter-bash #347, #316); a redirect after a pipeline or list attaches to the whole of it,
where bash gives it to the last command (#345). ``arguments`` splits a command whose words continue on
a later line without a backslash continuation, and the walker gives output redirects to a body's last
command, as bash does.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

MAX_SCRIPT_BYTES = 1 << 20  # one script's bytes handed to the parser; the file limit bounds the rest


@lru_cache(maxsize=1)
def _language() -> Language:
    return Language(tree_sitter_bash.language())


def parse(script: str) -> tuple[Node, bytes]:
    """The syntax tree of ``script`` and the bytes it indexes (a fresh parser: tree-sitter parsers are
    not thread-safe)."""
    data = script.encode("utf-8", "replace")[:MAX_SCRIPT_BYTES]
    return Parser(_language()).parse(data).root_node, data


def text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def row(node: Node) -> int:
    return node.start_point[0]


def command_runs(command: Node, source: bytes) -> Iterator[list[Node]]:
    """A ``command`` node's name and arguments, split where the grammar glued the next line's command on."""
    words: list[Node] = []
    previous: Node | None = None
    for child in command.named_children:
        if child.type in ("variable_assignment", "file_redirect", "herestring_redirect", "heredoc_redirect"):
            continue
        if previous is not None and _new_line(previous, child, source):
            yield words
            words = []
        words.append(child)
        previous = child
    if words:
        yield words


def _new_line(previous: Node, word: Node, source: bytes) -> bool:
    """The word starts a later line and no backslash continues the previous one (#347)."""
    if word.start_point[0] <= previous.end_point[0]:
        return False
    gap = source[previous.end_byte: word.start_byte]  # slice the source: a node's .text copies the node
    return b"\\\n" not in gap and b"\\\r\n" not in gap


def words_of(node: Node, source: bytes) -> list[Node]:
    """The name and argument nodes of a ``command`` (the first run, see ``command_runs``)."""
    return next(command_runs(node, source), [])
