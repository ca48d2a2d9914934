"""The `hfvet` command line: the Typer app, its command groups, and the entry point."""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from app.cli import checks, demo, exit_codes, vet
from app.cli.db import db_app
from app.cli.download import download_cmd
from app.cli.gate import gate_cmd
from app.cli.hub import hub_app
from app.cli.policy import policy_app
from app.cli.review import review_cmd
from app.cli.serve import serve
from app.cli.token import token_app

app = typer.Typer(
    name="hfvet",
    help="Vet Hugging Face checkpoints before any weights touch a GPU.\n\n"
    "Exit codes for scan/vet: 0 approve, 1 reject, 3 review, 2 usage or operational error.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command()(vet.scan)
app.command("vet")(vet.vet)
app.command("gate")(gate_cmd)
app.command("review")(review_cmd)
app.command("download")(download_cmd)
app.command()(serve)
app.command()(demo.demo)
app.command()(checks.checks)
app.add_typer(policy_app, name="policy")
app.add_typer(hub_app, name="hub")
app.add_typer(db_app, name="db")
app.add_typer(token_app, name="token")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        Console(stderr=True).print("interrupted")
        sys.exit(exit_codes.EXIT_INTERRUPTED)
