"""`hfvet hub serve`: the offline fixture hub (a stand-in for the Hugging Face Hub)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli import exit_codes

hub_app = typer.Typer(help="The offline fixture hub (a stand-in for the Hugging Face Hub).", no_args_is_help=True)


@hub_app.command("serve")
def hub_serve(
    root: Annotated[Path, typer.Option("--root", help="Directory of ORG/NAME repo folders (docs/fixture-hub.md).")],
    host: Annotated[str, typer.Option("--host", help="Loopback address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0 picks a free one).")] = 0,
    latency_ms: Annotated[
        float, typer.Option("--latency-ms", min=0, help="Hold every request back this long, like a remote hub.")
    ] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", help="No access log (benchmarks).")] = False,
    examples: Annotated[
        bool, typer.Option("--examples", help="Write the demo's example repos into ROOT first (docker-compose demo).")
    ] = False,
) -> None:
    """Serve ROOT over HTTP with the subset of the Hub API that huggingface_hub uses."""
    from app.hubfixture import serve

    if examples:
        from app.examples import build_examples

        root.mkdir(parents=True, exist_ok=True)
        build_examples(root)
    if not root.is_dir():
        exit_codes.fail(f"--root is not a directory: {root}")
    serve(root, host, port, latency_ms=latency_ms, log_level="warning" if quiet else "info",
          on_ready=lambda url: typer.echo(f"fixture hub serving {root} at {url}"))
