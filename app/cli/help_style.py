"""How every command's --help reads: `hfvet gate [OPTIONS] ORG/NAME`, flags without a type, choices as choices.

typer prints a required argument as `{repo}` in the usage line (it reads as a template placeholder
left unfilled) and every flag as `<bool>`. Every command and group of `hfvet` is built with these
classes (app/cli/main.py), so the rule lives here once:
- an argument shows its metavar (`ORG/NAME`, `PATH`; default: its name in capitals), bare when
  required and in brackets when optional, in the usage line and in the Arguments panel alike;
- a flag (`--show-info`, `--help`) shows no type;
- a choice shows its choices (`<text | json | sarif>`): declare it as a StrEnum (app/cli/options.py);
  spaces around `|` let a narrow terminal wrap between choices, never inside one;
- an argument shows no type: its metavar says what it takes, `...` after it when it takes several;
- a value option shows what it takes in words (VALUE_NAMES: `--policy <name|path>`, `--server <url>`),
  never `<str>`; a number shows `<int>` or `<number>`, and its range only when it tells something
  (`[0-65535]`, `[at least 1]`; not `x>=0`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

if TYPE_CHECKING:
    from typer._click import Context, Parameter

VALUE_NAMES = {
    "--policy": "<name|path>",  # a shipped policy's name or a YAML file
    "--repo": "<org/name>",
    "--revision": "<rev>",
    "--server": "<url>",
    "--endpoint": "<url>",
    "--token": "<token>",
    "--host": "<address>",
    "--name": "<name>",
    "--reason": "<text>",
    "--expires-in": "<duration>",
}
"""What a value option takes, by its long name: one word for the same option in every command."""


def _range_in_words(low: float | None, high: float | None) -> str | None:
    """`0-65535`, `at least 1`; None when the range says nothing a reader would not assume (`x>=0`)."""
    if low is not None and high is not None:
        return f"{low:g}-{high:g}"
    if high is not None:
        return f"at most {high:g}"
    return f"at least {low:g}" if low else None


class PlainArgument(TyperArgument):
    """An argument's metavar (`ORG/NAME`, `REPORTS...`) says what it takes: no type beside it."""

    @property
    def display_name_raw(self) -> str:
        name = super().display_name_raw
        return name + "..." if self.nargs != 1 else name

    def display_type_rich(self, ctx: Context) -> str | None:
        return None

    def _get_number_range_help_str(self) -> str | None:
        return None


class PlainOption(TyperOption):
    """A value option's type in words (see the module docstring)."""

    def display_type_rich(self, ctx: Context) -> str | None:
        if self.metavar is not None:
            return self.metavar
        named = next((VALUE_NAMES[opt] for opt in self.opts if opt in VALUE_NAMES), None)
        if named:
            return named
        descriptor = self.type_descriptor
        if descriptor.is_choice:
            return super().display_type_rich(ctx).replace("|", " | ")  # type: ignore[union-attr]
        if descriptor.is_ranged:
            return "<int>" if descriptor.ranged_type_name == "int" else "<number>"
        shown = super().display_type_rich(ctx)
        return "<text>" if shown == "<str>" else shown

    def _get_number_range_help_str(self) -> str | None:
        return _range_in_words(self.min, self.max)


def tidy(params: list[Parameter]) -> list[Parameter]:
    """The params with the metavars above; idempotent (help is formatted more than once)."""
    for param in params:
        if isinstance(param, TyperOption):
            param.__class__ = PlainOption  # typer builds the params itself: no hook to pass a class
            if param.is_flag and param.metavar is None:
                param.metavar = ""  # a flag takes no value: no `<bool>`
        elif isinstance(param, TyperArgument):
            param.__class__ = PlainArgument
            if param.metavar is None and param.name:
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
