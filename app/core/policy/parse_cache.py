"""celpy parse trees kept between processes as JSON, so a known policy loads without building the parser.

Building celpy's Lark parser (LALR tables) costs a cold `hfvet scan` a few hundred milliseconds; the
trees of a policy's handful of expressions read back from JSON in about a millisecond. A cache file
holds ``sha256(key + payload) || payload`` where the key names the expression, celpy's grammar and
parser module, and the lark version: a truncated, corrupt or foreign file fails that check and the
expression is parsed again and the file rewritten. JSON, never a pickle: the file only ever becomes
lark Tree and Token objects, rebuilt field by field, and anything unexpected counts as corrupt.
Whoever can write the user's cache directory can change the trees, as with the YARA cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from app.core.sealed_cache import read_sealed, user_cache_dir, write_sealed

FORMAT = "hfvet-cel-tree-1"  # bump when the JSON layout below changes
# Token attributes in the order lark's Token(type, value, ...) takes them after type and value.
TOKEN_POSITIONS = ("start_pos", "line", "column", "end_line", "end_column", "end_pos")
# Meta attributes of a tree with positions (propagate_positions), in lark's order: stored as a list.
META_FIELDS = ("empty", "line", "column", "start_pos", "container_line", "container_column",
               "container_start_pos", "end_line", "end_column", "end_pos", "container_end_line",
               "container_end_column", "container_end_pos")
TREE, TOKEN = "tree", "token"
_POSITION_TYPES = frozenset({int, bool, type(None)})


class NotATree(ValueError):
    """A cache payload (or a parse result) this module does not rebuild exactly."""


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/hfvet/cel-trees``, else ``~/.cache/hfvet/cel-trees`` (beside the YARA cache)."""
    return user_cache_dir() / "cel-trees"


@lru_cache(maxsize=1)
def parser_identity() -> str:
    """What a tree depends on besides the text: celpy's grammar and parser module, lark's version.

    Read from celpy's files (not its package metadata, which costs more to look up than a parse-free
    start saves) without importing celpy; a patched or upgraded celpy changes the bytes.
    """
    import lark  # the trees are lark objects: it is needed anyway

    spec = find_spec("celpy")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("celpy")
    package = Path(next(iter(spec.submodule_search_locations)))
    digest = hashlib.sha256(f"{FORMAT}\nlark {lark.__version__}\n".encode())
    for name in ("cel.lark", "celparser.py"):
        digest.update((package / name).read_bytes())
    return digest.hexdigest()


def expression_key(expr: str) -> str:
    return hashlib.sha256(f"{parser_identity()}\n{expr}".encode()).hexdigest()


def cached_tree(expr: str, parse: Callable[[str], Any], directory: Path | None = None) -> Any:
    """The parse tree of ``expr``: from the cache when it holds it intact, else ``parse(expr)`` (then saved)."""
    key = expression_key(expr)
    cache_file = (directory or cache_dir()) / f"{key[:40]}.json"
    cached = _load(cache_file, key)
    if cached is not None:
        return cached
    tree = parse(expr)  # a syntax error propagates: nothing is saved for it
    _save(tree, cache_file, key)
    return tree


# ---- JSON <-> lark ------------------------------------------------------------------------


def to_json(node: Any) -> Any:
    """A tree as nested lists: ``["tree", data, meta, children]``, ``["token", type, value, *positions]``."""
    from lark import Token, Tree

    if type(node) is Token:
        return [TOKEN, node.type, node.value, *(getattr(node, name) for name in TOKEN_POSITIONS)]
    if type(node) is Tree:
        return [TREE, to_json(node.data) if isinstance(node.data, Token) else node.data,
                _meta_json(node._meta), [to_json(child) for child in node.children]]  # _meta: None until read
    raise NotATree(type(node).__name__)


def _meta_json(meta: Any) -> list[Any] | dict[str, Any] | None:
    """The usual full set of positions as a list (a third of the bytes), any other set as a dict."""
    if meta is None:
        return None  # lark makes an empty Meta on first access
    fields = dict(vars(meta))
    if not _positions(fields.values()):  # None: a `true` token carries no position
        raise NotATree(f"meta {fields!r}")
    return [fields[name] for name in META_FIELDS] if tuple(fields) == META_FIELDS else fields


def from_json(data: Any) -> Any:
    """The lark objects ``to_json`` described; NotATree for any other shape."""
    from lark import Token, Tree
    from lark.tree import Meta

    def node(item: Any) -> Any:  # a closure: one import, few lookups, for thousands of nodes
        if type(item) is not list or not item:
            raise NotATree(repr(item)[:80])
        kind = item[0]
        if kind == TOKEN and len(item) == 3 + len(TOKEN_POSITIONS):
            if type(item[1]) is not str or type(item[2]) is not str or not _positions(item[3:]):
                raise NotATree("token fields")
            return Token(*item[1:])
        if kind == TREE and len(item) == 4 and type(item[3]) is list:
            label, fields = item[1], item[2]
            tree = Tree(label if type(label) is str else node(label), [node(child) for child in item[3]])
            if fields is not None:
                meta = Meta()  # type: ignore[no-untyped-call]
                vars(meta).update(_meta_fields(fields))
                tree._meta = meta  # lark's slot, which it fills lazily
            return tree
        raise NotATree(repr(kind)[:80])

    return node(data)


def _meta_fields(fields: Any) -> dict[str, Any]:
    if type(fields) is list and len(fields) == len(META_FIELDS):
        fields = dict(zip(META_FIELDS, fields, strict=True))
    if type(fields) is not dict or not _positions(fields.values()):
        raise NotATree("meta fields")
    return fields


def _positions(values: Iterable[Any]) -> bool:
    return {type(v) for v in values} <= _POSITION_TYPES


# ---- the file -----------------------------------------------------------------------------


def _load(cache_file: Path, key: str) -> Any | None:
    payload = read_sealed(cache_file, key)  # truncated, corrupt or foreign: parse instead
    if payload is None:
        return None
    try:
        return from_json(json.loads(payload))
    except (ValueError, RecursionError):  # NotATree and JSONDecodeError are ValueErrors
        return None


def _save(tree: Any, cache_file: Path, key: str) -> None:
    """Atomically (a concurrent reader sees the old file or the new one); an unwritable cache is no error."""
    try:
        payload = json.dumps(to_json(tree), separators=(",", ":")).encode()
    except (NotATree, RecursionError):
        return  # a tree this module cannot rebuild exactly is not cached
    write_sealed(cache_file, key, payload)
