"""`hfvet hub serve`: the offline fixture hub (a stand-in for the Hugging Face Hub)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli import exit_codes
from app.cli.listen import listen
from app.cli.options import examples

LOOPBACK = "127.0.0.1"  # a fixture hub is for this host unless --host says otherwise

hub_app = typer.Typer(help="The offline fixture hub (a stand-in for the Hugging Face Hub).", no_args_is_help=True)


@hub_app.command("serve", epilog=examples(
    ("the demo's example repos on :8090, for HF_ENDPOINT", 'hfvet hub serve --root ./hub --examples --port 8090'),
    ("a folder of ORG/NAME repos, answering like a distant hub",
     "hfvet hub serve --root ./repos --port 8090 --latency-ms 50"),
))
def hub_serve(
    root: Annotated[Path, typer.Option("--root", help="Directory of ORG/NAME repo folders (docs/fixture-hub.md).")],
    host: Annotated[
        str, typer.Option("--host", help="Address to bind: loopback by default; 0.0.0.0 for a container's hub.")
    ] = LOOPBACK,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port (0 picks a free one; in use: exit 2, naming it).")
    ] = 0,
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

    sock = listen(host, port)  # first: a port in use stops it before --examples writes anything
    if examples:
        from app.examples import build_examples

        root.mkdir(parents=True, exist_ok=True)
        build_examples(root)
    if not root.is_dir():
        sock.close()
        exit_codes.fail(f"--root is not a directory: {root}")
    serve(root, host, port, latency_ms=latency_ms, log_level="warning" if quiet else "info", sock=sock,
          on_ready=lambda url: typer.echo(f"fixture hub serving {root} at {url} (use it as HF_ENDPOINT={url})"))
