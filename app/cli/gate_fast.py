"""The fast twin of `hfvet gate ... --server URL` (app/cli/gate.py): no typer, rich or pydantic.

Deploy scripts start `hfvet gate` before every pull; with a server the answer is one HTTP GET,
so start-up is the whole cost. This parses exactly the options that path takes (their spelling,
the environment and the URL checks are app/cli/gate_args.py's, the printing app/cli/gate_answer.py's,
both shared with the full command line) and hands anything else (help, the local store, an unknown
or malformed option) to the full command line, which answers the same way. Differential test:
tests/integration/api/test_fast_gate.py runs both side by side.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from app.cli.gate_args import FORMATS, OPTIONS, remote

_VALUED = {flag: name for name, flags in OPTIONS.items() for flag in flags}


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
    where = remote(values.get("server"), values.get("token"))
    fmt = values.get("fmt", "text")
    if len(positional) != 1 or not where.server or fmt not in FORMATS:
        return None
    if where.bad_settings() or not _well_formed(positional[0], values.get("revision")):
        return None  # the full CLI names them and exits 2
    return GateArgs(positional[0], values.get("revision"), fmt, where.server, where.token)


def _well_formed(repo: str, revision: str | None) -> bool:
    """Whether app.core.ids accepts the repo and revision (the full CLI refuses them as the API does)."""
    from app.core.ids import parse_repo_id, parse_revision  # pure stdlib regexes

    try:
        parse_repo_id(repo)
        if revision is not None:
            parse_revision(revision)
    except ValueError:
        return False
    return True


def run(args: GateArgs) -> int:
    """Ask the server; print what `hfvet gate` prints; return its exit code."""
    from app.cli import exit_codes
    from app.cli.client import Client
    from app.cli.gate_answer import print_answer
    from app.errors import HfvetError

    try:
        doc = Client(args.server, args.token).gate(args.repo, args.revision)
    except HfvetError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return exit_codes.EXIT_ERROR
    return print_answer(doc, args.fmt, args.repo, args.revision, server=args.server)
