"""Text files read whole (up to a cap) as numbered logical lines: the input of the code, link and
command rules."""

from __future__ import annotations

import json
from dataclasses import dataclass

from app.core.formats.detect import HEAD_BYTES
from app.core.formats.text_encoding import decode, reading_encoding
from app.core.limits import LimitExceeded
from app.core.ports import Blob, SourceError

MAX_EVIDENCE = 200  # characters of a line quoted in a finding
SHELL_CONTINUATION = ("\\",)
# PowerShell and cmd.exe continue lines differently; markdown lines often end in a backtick.
_CONTINUATIONS_BY_SUFFIX = {".ps1": ("`",), ".psm1": ("`",), ".bat": ("^",), ".cmd": ("^",)}


@dataclass(frozen=True)
class Line:
    where: str  # "17", or "cell3:2" inside a notebook
    text: str
    code: bool = True  # False for markdown prose (a notebook's markdown cells, *.md files)


def read_whole(blob: Blob, cap: int) -> bytes:
    """All bytes of a file of at most ``cap`` bytes; ``LimitExceeded`` (nothing read) when larger."""
    if blob.size > cap:
        raise LimitExceeded(f"{blob.size} bytes exceed the {cap}-byte text limit")
    return _read_start(blob, blob.size)


def read_text(blob: Blob, cap: int) -> tuple[str, bool]:
    """At most ``cap`` bytes as text (see ``decode_text``); True when the file was cut."""
    return decode_text(_read_start(blob, min(blob.size, cap))), blob.size > cap


def read_views(blob: Blob, cap: int) -> tuple[list[str], bool]:
    """At most ``cap`` bytes as ``text_views``; True when the file was cut."""
    return text_views(_read_start(blob, min(blob.size, cap))), blob.size > cap


def _read_start(blob: Blob, length: int) -> bytes:
    data = blob.read(0, length)
    if len(data) != length:  # checking less of the file than a reader gets is no check
        raise SourceError(f"read {len(data)} of the first {length} bytes")
    return data


def decode_text(data: bytes) -> str:
    """In the encoding its head shows (see ``text_encoding``): UTF-8, or UTF-16/32 with or without
    a byte-order mark, as PowerShell and editors write it; undecodable bytes are replaced."""
    return decode(data, reading_encoding(data[:HEAD_BYTES]))


def text_views(data: bytes) -> list[str]:
    """``decode_text``, and for UTF-16/32 also the bytes as a UTF-8 reader (bash, transformers'
    template loader) takes them: ASCII hidden between the wide characters shows only there."""
    encoding = reading_encoding(data[:HEAD_BYTES])
    views = [decode(data, encoding)]
    if encoding != "utf-8":
        views.append(decode(data, "utf-8"))
    return views


def evidence(path: str, where: str, text: str) -> str:
    text = " ".join(text.split())
    if len(text) > MAX_EVIDENCE:
        text = text[: MAX_EVIDENCE - 3] + "..."
    return f"{path}:{where}: {text}"


def continuations_for(path: str) -> tuple[str, ...]:
    for suffix, marks in _CONTINUATIONS_BY_SUFFIX.items():
        if path.lower().endswith(suffix):
            return marks
    return SHELL_CONTINUATION


def logical_lines(
    text: str, prefix: str = "", continuations: tuple[str, ...] = SHELL_CONTINUATION, code: bool = True
) -> list[Line]:
    """Physical lines with continuations joined; each keeps the number of its first line."""
    lines: list[Line] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        stripped = raw.rstrip()
        if stripped.endswith(continuations) and len(pending) < 50:
            pending.append(stripped[:-1])
            continue
        pending.append(raw)
        lines.append(Line(f"{prefix}{start}", " ".join(pending), code))
        pending = []
    if pending:
        lines.append(Line(f"{prefix}{start}", " ".join(pending), code))
    return lines


class NotebookError(ValueError):
    """The file claims to be a notebook but is not one we can read."""


def notebook_lines(text: str) -> list[Line]:
    """Markdown and code cells of a Jupyter notebook (JSON), numbered ``cell<N>:<line>``."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise NotebookError(f"not valid JSON: {exc}") from exc
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if not isinstance(cells, list):
        raise NotebookError("no 'cells' list")
    lines: list[Line] = []
    for index, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            raise NotebookError(f"cell {index} is not an object")
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(part for part in source if isinstance(part, str))
        if not isinstance(source, str):
            raise NotebookError(f"cell {index} has a source that is not text")
        is_code = cell.get("cell_type") != "markdown"
        lines.extend(logical_lines(source, prefix=f"cell{index}:", code=is_code))
    return lines
