"""The one map from outcomes to exit codes, and the one place operational errors become exit 2."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, TypeVar

from app.errors import HfvetError
from app.setting_checks import SettingsError  # stdlib only: `hfvet gate --server` imports this module

if TYPE_CHECKING:
    from app.core.verdict import Verdict

# Light on purpose: every command imports this, `hfvet gate --server` included (rich and the core load on use).

EXIT_OK = 0
EXIT_FAILED = 1  # a reject verdict, or a check that found problems (policy test, docs --check)
EXIT_ERROR = 2  # usage or operational error: bad path, bad policy, hub unreachable, a port in use
EXIT_REVIEW = 3
EXIT_NOT_VETTED = 4  # hfvet gate: nothing stored for that revision
EXIT_MOVED = 5  # hfvet gate: the branch moved past the newest approved commit
EXIT_TAMPERED = 6  # hfvet download: a fetched file does not match the approved manifest
EXIT_INTERRUPTED = 130

_VERDICT_EXIT = {"approve": EXIT_OK, "reject": EXIT_FAILED, "review": EXIT_REVIEW}

T = TypeVar("T")


def for_verdict(verdict: Verdict) -> int:
    return _VERDICT_EXIT[verdict.value]


def fail(*lines: str) -> NoReturn:
    """Print each line as an error on stderr and exit 2."""
    import typer  # on use: `hfvet gate --server` runs without typer (app/cli/gate_fast.py)
    from rich.text import Text

    from app.cli.console import console

    err = console(stderr=True)
    for line in lines:
        err.print(Text.assemble(("error: ", "bold red"), line))
    raise typer.Exit(EXIT_ERROR)


def guard(fn: Callable[[], T]) -> T:
    """Run fn; operational errors print one clear line and exit 2."""
    try:
        return fn()
    except Exception as exc:
        if isinstance(exc, SettingsError):
            fail(*exc.lines)
        if isinstance(exc, HfvetError) or _is_source_error(exc):
            fail(str(exc))
        raise


def _is_source_error(exc: Exception) -> bool:
    """A SourceError, checked without importing the core: only code that imported it can raise one."""
    ports = sys.modules.get("app.core.ports")
    return ports is not None and isinstance(exc, ports.SourceError)
