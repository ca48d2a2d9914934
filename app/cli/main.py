"""The `hfvet` command line: the Typer app, its command groups, and the entry point.

Commands are imported only when they run (or when help lists them): `hfvet gate --server URL`
is called by every deploy script, and must not pay for the scanners, the policy engine or the
database it never touches.
"""

from __future__ import annotations

import importlib
import sys
from functools import cache
from typing import TYPE_CHECKING

import typer
from typer.core import TyperGroup
from typer.main import get_group

if TYPE_CHECKING:
    from typer._click import Command, Context  # typer vendors click: these are its own types

# name -> (module, attribute): a command function or a sub-Typer. The order is the order of --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "scan": ("app.cli.vet", "scan"),
    "vet": ("app.cli.vet", "vet"),
    "gate": ("app.cli.gate", "gate_cmd"),
    "review": ("app.cli.review", "review_cmd"),
    "download": ("app.cli.download", "download_cmd"),
    "serve": ("app.cli.serve", "serve"),
    "worker": ("app.cli.worker", "worker"),
    "demo": ("app.cli.demo", "demo"),
    "checks": ("app.cli.checks", "checks"),
    "policy": ("app.cli.policy", "policy_app"),
    "hub": ("app.cli.hub", "hub_app"),
    "db": ("app.cli.db", "db_app"),
    "token": ("app.cli.token", "token_app"),
}


class LazyGroup(TyperGroup):
    """A group whose commands are imported by name, on first use."""

    def list_commands(self, ctx: Context) -> list[str]:
        return [*super().list_commands(ctx), *COMMANDS]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if cmd_name in COMMANDS:
            return load_command(cmd_name)
        return super().get_command(ctx, cmd_name)


@cache
def load_command(name: str) -> Command:
    """The click command Typer builds for COMMANDS[name], exactly as if it had been registered up front."""
    module, attribute = COMMANDS[name]
    target = getattr(importlib.import_module(module), attribute)
    holder = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    holder.callback()(lambda: None)  # a callback keeps the holder a group, whatever it holds
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    return get_group(holder).commands[name]


app = typer.Typer(
    name="hfvet",
    cls=LazyGroup,
    help="Vet Hugging Face checkpoints before any weights touch a GPU.\n\n"
    "Exit codes for scan/vet: 0 approve, 1 reject, 3 review, 2 usage or operational error.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Typer needs a callback (or a command) up front; the commands come from LazyGroup."""


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        from app.cli.exit_codes import EXIT_INTERRUPTED

        sys.stderr.write("interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
