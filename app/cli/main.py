"""The `hfvet` command line: the Typer app, its command groups, and the entry point.

Commands are imported only when they run (or when help lists them): `hfvet gate --server URL`
is called by every deploy script, and must not pay for the scanners, the policy engine or the
database it never touches.
"""

from __future__ import annotations

import importlib
import sys
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import typer
from typer.core import TyperCommand
from typer.main import get_group

from app.cli import exit_codes, help_style
from app.setting_checks import SettingsError  # not app.settings: help and `gate --server` stay without pydantic

if TYPE_CHECKING:
    from typer._click import Command, Context, HelpFormatter  # typer vendors click: these are its own types

class CommandRef(NamedTuple):
    module: str
    attribute: str  # a command function or a sub-Typer
    summary: str  # the first paragraph of its help: what `hfvet --help` lists (tests/unit/cli/test_startup.py)


# The order is the order of --help. Listing them must not import them: `hfvet --help` stays light.
COMMANDS: dict[str, CommandRef] = {
    "scan": CommandRef("app.cli.vet", "scan",
                       "Vet a local snapshot directory or a single file. Nothing is loaded or executed."),
    "vet": CommandRef("app.cli.vet", "vet",
                      "Vet a repo from the hub at a pinned commit, reading only what a loader would execute."),
    "gate": CommandRef("app.cli.gate", "gate_cmd", "Exit 0 and print the approved 40-hex commit, or exit "
                       "non-zero with the reasons on stderr."),
    "review": CommandRef("app.cli.review", "review_cmd", "Approve or reject a vetted commit; the gate answers "
                         "with the newest review from then on."),
    "download": CommandRef("app.cli.download", "download_cmd", "Download an approved revision: exactly its "
                           "vetted files, each checked against the approved hashes."),
    "bom": CommandRef("app.cli.bom", "bom_cmd", "Print the CycloneDX 1.6 ML-BOM of a vetted commit: files and "
                      "hashes, references, policy and verdict."),
    "attest": CommandRef("app.cli.attest", "attest_cmd", "Sign a local store's verdicts and reviews of a repo "
                         "that have no attestation yet; print a commit's envelope."),
    "verify": CommandRef("app.cli.verify", "verify_cmd", "Verify an attestation offline: its signature by --key, "
                         "its statement, and what you ask of it."),
    "keys": CommandRef("app.cli.attest", "keys_app", "The ed25519 key that signs verdict attestations "
                       "(HFVET_ATTESTATION_KEY)."),
    "serve": CommandRef("app.cli.serve", "serve", "Serve the HTTP API (POST /vet, GET /gate, POST "
                        "/webhooks/huggingface, ...) and the dashboard at /ui/,\nand run vets."),
    "worker": CommandRef("app.cli.worker", "worker", "Run vets queued by the API replicas (HFVET_QUEUE=procrastinate, "
                         "a PostgreSQL HFVET_DATABASE_URL)."),
    "demo": CommandRef("app.cli.demo", "demo", "Offline demo: serve the bundled example repos with the fixture "
                       "hub, start `hfvet serve`, vet each\nrepo through POST /vet, print a table, then ask the "
                       "deploy gate about the approved and the blocked repo."),
    "checks": CommandRef("app.cli.checks", "checks",
                         "List every check hfvet runs (scanner, severity, kind, rule id, meaning)."),
    "policy": CommandRef("app.cli.policy", "policy_app",
                         "Trust policies as code: check, test, explain a verdict, diff two policies."),
    "hub": CommandRef("app.cli.hub", "hub_app", "The offline fixture hub (a stand-in for the Hugging Face Hub)."),
    "db": CommandRef("app.cli.db", "db_app", "The verdict store (HFVET_DATABASE_URL; SQLite by default)."),
    "token": CommandRef("app.cli.token", "token_app", "API tokens (stored hashed; a secret is shown once)."),
}


class LazyGroup(help_style.Group):
    """A group whose commands are imported by name, on first use; its help lists them unimported."""

    listing = False  # set while help is formatted: commands are then only named and summarised

    def list_commands(self, ctx: Context) -> list[str]:
        return [*super().list_commands(ctx), *COMMANDS]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if cmd_name in COMMANDS:
            return listed_command(cmd_name) if self.listing else load_command(cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: Context) -> Any:
        """Every command builds its Settings on start; a bad one is a usage error (exit 2), not a traceback."""
        try:
            return super().invoke(ctx)
        except SettingsError as exc:
            exit_codes.fail(*exc.lines)

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False


def listed_command(name: str) -> Command:
    """A stand-in that only carries what the command list shows: its name and summary."""
    return TyperCommand(name, help=COMMANDS[name].summary)


@cache
def load_command(name: str) -> Command:
    """The click command Typer builds for COMMANDS[name], exactly as if it had been registered up front."""
    ref = COMMANDS[name]
    target = getattr(importlib.import_module(ref.module), ref.attribute)
    holder = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    holder.callback()(lambda: None)  # a callback keeps the holder a group, whatever it holds
    if isinstance(target, typer.Typer):
        _styled(target)
        holder.add_typer(target, name=name, cls=help_style.Group)
    else:  # its Examples come with it (app/cli/options.py command_examples)
        holder.command(name, cls=help_style.Command, epilog=getattr(target, "epilog", None))(target)
    return get_group(holder).commands[name]


def _styled(group: typer.Typer) -> None:
    """Every command of a sub-Typer (and of its own sub-Typers) built with help_style's classes."""
    for info in group.registered_commands:  # typer fills in its own TyperCommand: replace exactly that
        info.cls = help_style.Command if info.cls in (None, TyperCommand) else info.cls
    for sub in group.registered_groups:
        sub.cls = help_style.Group
        if sub.typer_instance is not None:
            _styled(sub.typer_instance)


app = typer.Typer(
    name="hfvet",
    cls=LazyGroup,
    help="Vet Hugging Face checkpoints before any weights touch a GPU.\n\n"
    "Exit codes for scan/vet: 0 approve, 1 reject, 3 review, 2 usage or operational error (a bad setting, "
    "the hub unreachable, a port in use). Each command's --help ends with examples.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _show_version(wanted: bool) -> None:
    if wanted:
        from app.cli.version import print_version  # on use: the policy engine and the scanners

        print_version()
        raise typer.Exit(exit_codes.EXIT_OK)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", is_eager=True, callback=_show_version,
                           help="Print the hfvet version, the active policy (name, sha256) and each engine's version.")
    ] = False,
) -> None:
    """Typer needs a callback (or a command) up front; the commands come from LazyGroup."""


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        from app.cli.exit_codes import EXIT_INTERRUPTED

        sys.stderr.write("interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
