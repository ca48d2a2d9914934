"""YAML loading that remembers line numbers, so schema errors can point at a line.

Only safe loaders are used (no arbitrary objects): libyaml's CSafeLoader when PyYAML was built
with it (a tenth of the CPU time), else yaml.SafeLoader; both give the same data and lines.
Duplicate keys are an error because plain YAML would silently keep the last one.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from app.core.policy.errors import Issue, PolicyError


class LineDict(dict[Any, Any]):
    """A mapping plus the 1-based line of the mapping and of each of its keys."""

    line: int = 1
    lines: dict[Any, int]


class LineList(list[Any]):
    """A sequence plus the 1-based line of each item."""

    line: int = 1
    lines: list[int]


class _DuplicateKeyError(yaml.MarkedYAMLError):
    pass


class _PyLineLoader(yaml.SafeLoader):
    pass


class _CLineLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]  # CSafeLoader is untyped
    pass


_LineLoader: type[yaml.SafeLoader] = _CLineLoader if yaml.__with_libyaml__ else _PyLineLoader


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    result = LineDict()
    result.line = node.start_mark.line + 1
    result.lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, Hashable):
            raise _DuplicateKeyError(problem="unhashable key", problem_mark=key_node.start_mark)
        if key in result:
            raise _DuplicateKeyError(problem=f"duplicate key {key!r}", problem_mark=key_node.start_mark)
        result[key] = loader.construct_object(value_node, deep=True)
        result.lines[key] = key_node.start_mark.line + 1
    return result


def _construct_sequence(loader: yaml.SafeLoader, node: yaml.SequenceNode) -> LineList:
    result = LineList(loader.construct_object(child, deep=True) for child in node.value)
    result.line = node.start_mark.line + 1
    result.lines = [child.start_mark.line + 1 for child in node.value]
    return result


for _loader in (_PyLineLoader, _CLineLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def load_yaml(path: Path, loader_class: type[yaml.SafeLoader] | None = None) -> Any:
    """Parse one YAML document; syntax errors become a PolicyError with the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError.single(str(path), None, f"cannot read: {exc}") from exc
    try:
        # Inside the try: PyYAML's reader refuses control characters as soon as it is built.
        loader = (loader_class or _LineLoader)(text)  # a safe loader: plain data only
    except yaml.YAMLError as exc:
        raise PolicyError.single(str(path), None, f"invalid YAML: {exc}") from exc
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise PolicyError.single(str(path), line, f"invalid YAML: {exc.problem or exc}") from exc
    except yaml.YAMLError as exc:
        raise PolicyError.single(str(path), None, f"invalid YAML: {exc}") from exc
    except (ValueError, OverflowError) as exc:  # a scalar PyYAML resolves but cannot build: 2999-12-32
        raise PolicyError.single(str(path), None, f"invalid YAML value: {exc}") from exc
    finally:
        loader.dispose()


def line_of(root: Any, loc: Sequence[int | str]) -> int:
    """The line of the deepest part of `loc` (a pydantic error location) found in the document.

    Location parts that are not keys of the document (pydantic's union member tags) are skipped.
    """
    node, line = root, getattr(root, "line", 1)
    for part in loc:
        if isinstance(node, LineDict) and isinstance(part, Hashable) and part in node:
            line, node = node.lines.get(part, line), node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and 0 <= part < len(node):
            line, node = node.lines[part], node[part]
    return line


def validation_issues(exc: ValidationError, file: str, root: Any) -> list[Issue]:
    """pydantic errors -> `file:line: where: what` issues (root is a yamlmarks document)."""
    return [Issue(file, line_of(root, err["loc"]), _describe(err)) for err in exc.errors()]


def _describe(err: Mapping[str, Any]) -> str:
    loc = [p for p in err["loc"] if not (isinstance(p, str) and p[:1].isupper())]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".") or "(top)"
    if err["type"] == "extra_forbidden":
        return f"{where}: unknown key {loc[-1]!r}" if loc else "unknown key"
    if err["type"] == "missing":
        return f"{where}: missing required key"
    if err["type"] == "string_type" and isinstance(err.get("input"), bool | int | float):
        return f"{where}: YAML read {err['input']!r} as a non-string: quote it"
    return f"{where}: {str(err['msg']).removeprefix('Value error, ')}"
