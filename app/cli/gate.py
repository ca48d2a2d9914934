"""`hfvet gate`: may a deploy pull this repo? Prints the approved commit, or refuses with reasons.

Deploy scripts call it before every pull, so it imports only what the chosen path needs: with
`--server` a stdlib HTTP client; without it the store and the policy engine. Its fast twin,
app/cli/gate_fast.py, answers `gate --server` without this module or typer; the two share the
options and environment (app/cli/gate_args.py) and the printing (app/cli/gate_answer.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from app.cli import exit_codes, ids
from app.cli.gate_answer import exit_for, print_answer, refusal_lines
from app.cli.gate_args import OPTIONS, GateFormat, remote
from app.cli.options import RepoArg, command_examples

if TYPE_CHECKING:
    from app.services.gating import GateResult

__all__ = ["exit_for", "explain_refusal", "gate_cmd", "local_gate"]


@command_examples(
    ("in a deploy script: pin exactly the approved commit",
     "sha=$(hfvet gate nvidia/DeepSeek-V4-Flash-NVFP4) && "
     "vllm serve nvidia/DeepSeek-V4-Flash-NVFP4 --revision \"$sha\""),
    ("ask an hfvet server instead of the local store",
     "HFVET_SERVER=http://hfvet:8000 hfvet gate nvidia/DeepSeek-V4-Flash-NVFP4 --format json"),
)
def gate_cmd(
    repo: RepoArg,
    revision: Annotated[
        str | None,
        typer.Option(*OPTIONS["revision"],
                     help="Commit sha (full, or the first 7+ hex of a vetted one), branch or tag "
                          "(default: the newest approved commit)."),
    ] = None,
    fmt: Annotated[GateFormat, typer.Option(*OPTIONS["fmt"], help="The approved sha alone, or the whole answer.")
                   ] = GateFormat.text,
    server: Annotated[
        str | None,
        typer.Option(*OPTIONS["server"],
                     help="Ask this hfvet server (GET /gate) instead of the local store (default: $HFVET_SERVER). "
                          "The token comes from HFVET_TOKEN."),
    ] = None,
    token: Annotated[str | None, typer.Option(*OPTIONS["token"], hidden=True)] = None,
) -> None:
    """Exit 0 and print the approved 40-hex commit, or exit non-zero with the reasons on stderr.

    Exit codes: 0 approved, 1 rejected or waiting for review, 4 not vetted, 5 the branch moved past
    the newest approved commit, 2 error (the hub or the server unreachable: fails closed).
    """
    repo, revision = ids.repo_id(repo), ids.revision(revision)  # before any store, hub or server is asked
    where = remote(server, token)  # HFVET_SERVER / HFVET_TOKEN read as the fast twin reads them
    if where.server and (lines := where.bad_settings()):
        exit_codes.fail(*lines)  # the local path's Settings() checks its own
    doc = exit_codes.guard(
        lambda: _remote(where.server, where.token, repo, revision) if where.server else _local(repo, revision))
    raise typer.Exit(print_answer(doc, fmt, repo, revision, _styled, where.server))


def _remote(server: str, token: str | None, repo: str, revision: str | None) -> dict[str, Any]:
    from app.cli.client import Client

    return Client(server, token).gate(repo, revision)


def _local(repo: str, revision: str | None) -> dict[str, Any]:
    return local_gate(repo, revision).to_dict()


def local_gate(repo: str, revision: str | None) -> GateResult:
    """The gate's answer from the local store (branches resolved on the hub); `hfvet download` too."""
    from app.settings import Settings

    settings = Settings()  # first: a bad setting refuses before the store and the policy engine load
    from app.services.commits import expand_commit
    from app.services.gating import gate
    from app.services.policies import active_policy
    from app.services.references import Bounds
    from app.services.store import open_store
    from app.sources.hub import HubClient, resolve_revision  # the hub only for a branch

    policy = active_policy(settings)
    store = open_store(settings)

    def resolve(r: str, rev: str) -> str:
        return resolve_revision(r, rev, HubClient.from_settings(settings))

    try:
        return gate(repo, expand_commit(store, repo, revision, resolve), store=store, policy=policy,
                    resolve=resolve, bounds=Bounds(settings.gate_hub_budget))
    finally:
        store.close()


def explain_refusal(doc: dict[str, Any], repo: str, revision: str | None) -> None:
    _styled(refusal_lines(doc, repo, revision))


def _styled(lines: list[str]) -> None:
    """A refusal's lines on stderr, the headline in bold red (rich loads only for a refusal)."""
    from rich.text import Text

    from app.cli.console import console

    err = console(stderr=True)
    headline, *reasons = lines
    err.print(Text.assemble(("refused: ", "bold red"), headline.removeprefix("refused: ")))
    for reason in reasons:
        err.print(Text(reason))
