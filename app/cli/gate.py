"""`hfvet gate`: may a deploy pull this repo? Prints the approved commit, or refuses with reasons."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from app.cli import exit_codes
from app.core.gate import Approved, Moved, NotVetted
from app.services.gating import GateResult, active_policy, gate
from app.services.store import open_store
from app.settings import Settings


def gate_cmd(
    repo: Annotated[str, typer.Argument(help="ORG/NAME on the hub.")],
    revision: Annotated[
        str | None,
        typer.Option("--revision", "-r", help="Commit sha, branch or tag (default: the newest approved commit)."),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="text (the sha alone) or json.")] = "text",
) -> None:
    """Exit 0 and print the approved 40-hex commit, or exit non-zero with the reasons on stderr.

    Exit codes: 0 approved, 1 rejected or waiting for review, 4 not vetted, 5 the branch moved past
    the newest approved commit, 2 error (the hub unreachable for a branch: fails closed).
    """
    if fmt not in ("text", "json"):
        exit_codes.fail(f"--format must be text or json, not {fmt!r}")
    result = exit_codes.guard(lambda: local_gate(repo, revision))
    if fmt == "json":
        sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
    elif isinstance(result.answer, Approved):
        sys.stdout.write(result.answer.outcome.sha + "\n")
    if not isinstance(result.answer, Approved):
        explain_refusal(result)
    raise typer.Exit(exit_for(result))


def local_gate(repo: str, revision: str | None) -> GateResult:
    """The gate's answer from the local store (branches resolved on the hub); `hfvet download` too."""
    from app.sources.hub import HubClient, resolve_revision  # the hub only for a branch

    settings = Settings()
    policy = active_policy(settings)
    store = open_store(settings)
    try:
        return gate(repo, revision, store=store, policy=policy,
                    resolve=lambda r, rev: resolve_revision(r, rev, HubClient.from_settings(settings)))
    finally:
        store.close()


def exit_for(result: GateResult) -> int:
    if isinstance(result.answer, Approved):
        return exit_codes.EXIT_OK
    if isinstance(result.answer, NotVetted):
        return exit_codes.EXIT_NOT_VETTED
    if isinstance(result.answer, Moved):
        return exit_codes.EXIT_MOVED
    return exit_codes.EXIT_FAILED


def explain_refusal(result: GateResult) -> None:
    doc = result.to_dict()
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    where = f"{result.repo}@{doc.get('revision') or result.requested or '(newest approved)'}"
    err.print(Text.assemble(("refused: ", "bold red"), f"{where} is {doc['status']}"
                            + (f" ({doc['verdict']})" if "verdict" in doc else "")
                            + f" under policy {result.policy.name}"))
    for reason in doc.get("reasons") or []:
        err.print(Text(f"  - {reason}"))
