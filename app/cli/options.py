"""Options shared by several commands, declared once."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, TypeVar

import typer


class OutputFormat(StrEnum):
    """--format choices: one per entry of RENDERERS (a test keeps the two equal)."""

    text = "text"
    json = "json"
    sarif = "sarif"
    cyclonedx = "cyclonedx"


RepoArg = Annotated[str, typer.Argument(metavar="ORG/NAME", help="The repo on the hub.", show_default=False)]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="Report format.")]
PolicyOpt = Annotated[
    Path | None,
    typer.Option(
        "--policy",
        help="Trust policy: a YAML file or a shipped name (default, strict), or `interim` for the "
        "severity-only verdict. Without it the active policy applies ($HFVET_POLICY, default: default).",
    ),
]


def examples(*cases: tuple[str, str]) -> str:
    """A command's --help epilog (`@app.command(epilog=examples(...))`), in the one style every command uses:
    an `Examples:` heading, then per example a `# what it does` line and the command line, copyable as is.

    Square brackets are escaped: typer reads help as rich markup.
    """
    blocks = [f"# {what}\n{command}".replace("[", r"\[") for what, command in cases]
    return "\n\n".join(["Examples:", *blocks])


F = TypeVar("F", bound=Callable[..., None])


def command_examples(*cases: tuple[str, str]) -> Callable[[F], F]:
    """``examples(...)`` for a top-level command: app/cli/main.py registers those, so the epilog rides on
    the function (``@command_examples(("what it does", "hfvet ...")), ...)``) and it adds it there."""

    def mark(command: F) -> F:
        command.epilog = examples(*cases)  # type: ignore[attr-defined]  # read by app/cli/main.py load_command
        return command

    return mark


ShowInfoOpt = Annotated[bool, typer.Option("--show-info", help="Also list info findings in text output.")]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=1,
        help="Seconds for the whole vet, the hub listing included; files not started by then are unscanned "
        "(default: $HFVET_VET_DEADLINE, 900).",
        show_default=False,
    ),
]
