"""The `hfvet` executable: `gate --server` answers without loading the full command line."""

from __future__ import annotations

import sys


def main() -> None:
    from app.cli.gate_fast import parse, run

    args = parse(sys.argv[1:])
    if args is not None:
        sys.exit(run(args))
    from app.cli.main import main as full

    full()
