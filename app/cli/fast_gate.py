"""`hfvet gate ... --server URL` without typer, rich or pydantic: the deploy scripts' hot path.

Deploy scripts start `hfvet gate` before every pull; with a server the answer is one HTTP GET,
so start-up is the whole cost. This parses exactly the options that path takes and hands
anything else (help, the local store, an unknown or malformed option) to the full command line,
which answers the same way (tests/unit/cli/test_fast_gate.py runs both side by side).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

_VALUED = {"--revision": "revision", "-r": "revision", "--format": "fmt", "-f": "fmt",
           "--server": "server", "--token": "token"}


@dataclass(frozen=True)
class GateArgs:
    repo: str
    revision: str | None
    fmt: str
    server: str
    token: str | None


def parse(argv: list[str]) -> GateArgs | None:
    """The arguments of a `gate --server` call, or None for anything the full CLI should parse."""
    if not argv or argv[0] != "gate":
        return None
    values: dict[str, str] = {}
    positional: list[str] = []
    rest = iter(argv[1:])
    for arg in rest:
        name, eq, inline = arg.partition("=")
        if name in _VALUED and name.startswith("--") and eq:
            values[_VALUED[name]] = inline
        elif arg in _VALUED:
            value = next(rest, None)
            if value is None:
                return None
            values[_VALUED[arg]] = value
        elif arg.startswith("-"):
            return None  # --help, a typo, `--`: the full CLI explains
        else:
            positional.append(arg)
    server = values.get("server") or os.environ.get("HFVET_SERVER")
    fmt = values.get("fmt", "text")
    if len(positional) != 1 or not server or fmt not in ("text", "json"):
        return None
    if bad_remote_settings(server, from_option=bool(values.get("server"))):
        return None  # the full CLI names them and exits 2
    token = values.get("token") or os.environ.get("HFVET_TOKEN")
    return GateArgs(positional[0], values.get("revision"), fmt, server, token)


def bad_remote_settings(server: str, from_option: bool) -> list[str]:
    """The remote gate builds no Settings (no pydantic on this path), so it checks the URLs it reads
    itself, in Settings' words: the server, and HF_ENDPOINT, which every command refuses when bad."""
    from app.setting_checks import bad_url_lines

    return bad_url_lines({"HF_ENDPOINT": os.environ.get("HF_ENDPOINT"),
                          "--server" if from_option else "HFVET_SERVER": server})


def run(args: GateArgs) -> int:
    """Ask the server; print what `hfvet gate` prints; return its exit code."""
    from app.cli import exit_codes
    from app.cli.client import Client
    from app.cli.gate_answer import exit_for, refusal_lines
    from app.errors import HfvetError

    try:
        doc = Client(args.server, args.token).gate(args.repo, args.revision)
    except HfvetError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return exit_codes.EXIT_ERROR
    code = exit_for(doc)
    if args.fmt == "json":
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    elif code == exit_codes.EXIT_OK:
        sys.stdout.write(doc["revision"] + "\n")
    if code != exit_codes.EXIT_OK:
        sys.stderr.write("".join(line + "\n" for line in refusal_lines(doc, args.repo, args.revision)))
    return code
