"""How every command's --help reads: `hfvet gate [OPTIONS] ORG/NAME`, flags without a type, choices as choices.

typer prints a required argument as `{repo}` in the usage line (it reads as a template placeholder
left unfilled) and every flag as `<bool>`. Every command and group of `hfvet` is built with these
classes (app/cli/main.py), so the rule lives here once:
- an argument shows its metavar (`ORG/NAME`, `PATH`; default: its name in capitals), bare when
  required and in brackets when optional, in the usage line and in the Arguments panel alike;
- a flag (`--show-info`, `--help`) shows no type;
- a choice shows its choices (`<text|json|sarif>`): declare it as a StrEnum (app/cli/options.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

if TYPE_CHECKING:
    from typer._click import Context, Parameter


def tidy(params: list[Parameter]) -> list[Parameter]:
    """The params with the metavars above; idempotent (help is formatted more than once)."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""  # a flag takes no value: no `<bool>`
        elif isinstance(param, TyperArgument) and param.metavar is None and param.name:
            param.metavar = param.name.upper()
    return params


def usage_pieces(command: TyperCommand | TyperGroup, ctx: Context) -> list[str]:
    """`[OPTIONS] ORG/NAME [PATH]...`: required arguments bare, optional ones in brackets."""
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in tidy(command.get_params(ctx)):
        if isinstance(param, TyperArgument):
            name = param.metavar or str(param.name).upper()
            name = name if param.required else f"[{name}]"
            pieces.append(name + ("..." if param.nargs != 1 else ""))
    return pieces


class Command(TyperCommand):
    """A command whose --help follows the rules above."""

    def get_params(self, ctx: Context) -> list[Parameter]:
        return tidy(super().get_params(ctx))

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        return usage_pieces(self, ctx)


class Group(TyperGroup):
    """A command group whose --help follows the rules above (`hfvet policy`, `hfvet token`...)."""

    def get_params(self, ctx: Context) -> list[Parameter]:
        return tidy(super().get_params(ctx))

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        """A bare group (`hfvet`, `hfvet token`) prints its help and exits 0: asking what it does is no usage error."""
        if not args and not ctx.resilient_parsing:
            typer.echo(ctx.get_help())
            ctx.exit(0)
        return super().parse_args(ctx, args)
