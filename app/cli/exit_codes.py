"""The one map from outcomes to exit codes, and the one place operational errors become exit 2."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from app.core.ports import SourceError
from app.core.verdict import Verdict
from app.errors import HfvetError

EXIT_OK = 0
EXIT_FAILED = 1  # a reject verdict, or a check that found problems (policy test, docs --check)
EXIT_ERROR = 2  # usage or operational error: bad path, bad policy, hub unreachable
EXIT_REVIEW = 3
EXIT_NOT_VETTED = 4  # hfvet gate: nothing stored for that revision
EXIT_MOVED = 5  # hfvet gate: the branch moved past the newest approved commit
EXIT_TAMPERED = 6  # hfvet download: a fetched file does not match the approved manifest
EXIT_INTERRUPTED = 130

_VERDICT_EXIT = {Verdict.APPROVE: EXIT_OK, Verdict.REJECT: EXIT_FAILED, Verdict.REVIEW: EXIT_REVIEW}

T = TypeVar("T")


def for_verdict(verdict: Verdict) -> int:
    return _VERDICT_EXIT[verdict]


def fail(*lines: str) -> NoReturn:
    """Print each line as an error on stderr and exit 2."""
    err = Console(stderr=True, highlight=False)
    for line in lines:
        err.print(Text.assemble(("error: ", "bold red"), line))
    raise typer.Exit(EXIT_ERROR)


def guard(fn: Callable[[], T]) -> T:
    """Run fn; operational errors print one clear line and exit 2."""
    try:
        return fn()
    except (HfvetError, SourceError) as exc:
        fail(str(exc))
