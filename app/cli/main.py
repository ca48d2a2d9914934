"""The `hfvet` command line. The only place that maps errors to exit codes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from app.cli.checks import render_checks_markdown
from app.cli.policy import policy_app
from app.core.limits import Limits
from app.core.ports import SourceError
from app.core.report import Report
from app.core.scanners import all_scanners
from app.errors import HfvetError
from app.render.json_report import render_json
from app.render.sarif import render_sarif
from app.render.text import print_report
from app.services.vetting import scan_local, vet_remote

EXIT_ERROR = 2

app = typer.Typer(
    name="hfvet",
    help="Vet Hugging Face checkpoints before any weights touch a GPU.\n\n"
    "Exit codes for scan/vet: 0 approve, 1 reject, 3 review, 2 usage or operational error.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class OutputFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"


FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="Report format.")]
PolicyOpt = Annotated[
    Path | None,
    typer.Option(
        "--policy",
        help="Trust policy: a YAML file or a shipped name (default, strict). "
        "Without it a severity-only interim verdict is used.",
    ),
]
ShowInfoOpt = Annotated[bool, typer.Option("--show-info", help="Also list info findings in text output.")]
TimeoutOpt = Annotated[
    float,
    typer.Option("--timeout", min=1, help="Seconds for the whole vet; files not started by then are unscanned."),
]


@app.command()
def scan(
    path: Annotated[Path, typer.Argument(help="A downloaded snapshot directory or a single file.")],
    repo: Annotated[
        str | None, typer.Option("--repo", help="ORG/NAME identity for the trust policy (default: unknown).")
    ] = None,
    policy: PolicyOpt = None,
    fmt: FormatOpt = OutputFormat.text,
    show_info: ShowInfoOpt = False,
    timeout: TimeoutOpt = Limits.max_vet_seconds,
) -> None:
    """Vet a local snapshot directory or a single file. Nothing is loaded or executed."""
    limits = Limits(max_vet_seconds=timeout)
    report = _guard(lambda: scan_local(path, repo_id=repo, policy_path=policy, limits=limits))
    _emit(report, fmt, show_info)
    raise typer.Exit(report.verdict.exit_code)


@app.command("vet")
def vet_cmd(
    repo: Annotated[str, typer.Argument(help="ORG/NAME on the hub.")],
    revision: Annotated[str, typer.Option("--revision", "-r", help="Branch, tag or commit sha.")] = "main",
    policy: PolicyOpt = None,
    fmt: FormatOpt = OutputFormat.text,
    show_info: ShowInfoOpt = False,
    endpoint: Annotated[
        str | None, typer.Option("--endpoint", envvar="HF_ENDPOINT", help="Hub URL (default: huggingface.co).")
    ] = None,
    token: Annotated[str | None, typer.Option("--token", envvar="HF_TOKEN", help="Hub token.")] = None,
    timeout: TimeoutOpt = Limits.max_vet_seconds,
) -> None:
    """Vet a repo from the hub at a pinned commit, reading only what a loader would execute."""
    limits = Limits(max_vet_seconds=timeout)
    report = _guard(
        lambda: vet_remote(
            repo, revision=revision, policy_path=policy, endpoint=endpoint, token=token, limits=limits
        )
    )
    _emit(report, fmt, show_info)
    raise typer.Exit(report.verdict.exit_code)


@app.command()
def demo(
    policy: Annotated[Path, typer.Option("--policy", help="Trust policy (file or shipped name).")] = Path("default"),
    keep: Annotated[
        Path | None, typer.Option("--keep", help="Write the example repos here and keep them (for hfvet scan).")
    ] = None,
) -> None:
    """Offline demo: vet the bundled example repos through the fixture hub and print a table."""
    from app.cli.demo import run_demo

    rows = _guard(lambda: run_demo(Console(), policy=policy, keep=keep))
    unexpected = [r.example.repo_id for r in rows if not r.as_expected]
    if unexpected:
        Console(stderr=True).print(Text(f"unexpected verdicts: {', '.join(unexpected)}", style="bold red"))
        raise typer.Exit(1)


@app.command()
def checks(
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the README's markdown table.")] = False,
) -> None:
    """List every check hfvet runs (scanner, severity, rule id, meaning)."""
    if markdown:
        sys.stdout.write(render_checks_markdown() + "\n")
        return
    console = Console()
    for scanner in all_scanners():
        for rule in scanner.rules:
            console.print(
                Text(f"{scanner.name:<16} {rule.severity.value:<8} {rule.id:<30} {rule.description}")
            )


T = TypeVar("T")


app.add_typer(policy_app, name="policy")
hub_app = typer.Typer(help="The offline fixture hub (a stand-in for the Hugging Face Hub).", no_args_is_help=True)
app.add_typer(hub_app, name="hub")


@hub_app.command("serve")
def hub_serve(
    root: Annotated[Path, typer.Option("--root", help="Directory of ORG/NAME repo folders (docs/fixture-hub.md).")],
    host: Annotated[str, typer.Option("--host", help="Loopback address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0 picks a free one).")] = 0,
) -> None:
    """Serve ROOT over HTTP with the subset of the Hub API that huggingface_hub uses."""
    from app.hubfixture import serve

    if not root.is_dir():
        Console(stderr=True).print(Text(f"error: --root is not a directory: {root}"))
        raise typer.Exit(EXIT_ERROR)
    serve(root, host, port, on_ready=lambda url: typer.echo(f"fixture hub serving {root} at {url}"))


def _guard(fn: Callable[[], T]) -> T:
    """Run fn; operational errors print one clear line and exit 2."""
    try:
        return fn()
    except (HfvetError, SourceError) as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(EXIT_ERROR) from exc


def _emit(report: Report, fmt: OutputFormat, show_info: bool) -> None:
    if fmt is OutputFormat.json:
        sys.stdout.write(render_json(report) + "\n")
    elif fmt is OutputFormat.sarif:
        sys.stdout.write(render_sarif(report) + "\n")
    else:
        print_report(report, Console(), show_info=show_info)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        Console(stderr=True).print("interrupted")
        sys.exit(130)
