"""The values a shell walk carries: downloaded bytes (a taint), words, and what it finds."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

_HUB = re.compile(r"^(?:https?://(?:www\.)?(?:huggingface\.co|hf\.co)/)?(?P<repo>[\w.-]+/[\w.-]+?)(?:\.git)?/?$")


@dataclass(frozen=True)
class Taint:
    url: str  # what was downloaded ("?" when the URL is not in the text)
    row: int  # 0-based line of the download
    urls: tuple[str, ...] = ()  # every URL of the download command (curl takes several)


@dataclass(frozen=True)
class Execution:
    row: int  # 0-based line of the command that runs it
    url: str
    why: str
    fetched_row: int  # 0-based line of the download
    urls: tuple[str, ...] = ()


@dataclass(frozen=True)
class HubCode:
    row: int
    repo: str  # org/name
    revision: str | None
    how: str


@dataclass(frozen=True)
class Val:
    text: str
    taint: Taint | None = None
    path: bool = False  # a process substitution: the word is a file holding the taint


Input = Taint | str | None  # stdin: downloaded bytes, literal text (a here-document), or nothing known


def norm(path: str) -> str:
    return posixpath.normpath(path.strip().strip("\"'")).removeprefix("./") if path.strip() else ""


def hub_repo(target: str) -> tuple[str, str | None] | None:
    """`org/name` (and revision) of a Hub repo URL or id, or None."""
    base, _, revision = target.partition("@")
    match = _HUB.match(base)
    if not match or ("://" in target and not re.search(r"//(?:www\.)?(?:huggingface\.co|hf\.co)/", target)):
        return None
    return match.group("repo"), revision or None
