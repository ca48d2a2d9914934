"""`hfvet review`: approve or reject a vetted commit, through an hfvet server or the local store."""

from __future__ import annotations

import getpass
from typing import Annotated, NoReturn

import typer
from rich.text import Text

from app.cli import exit_codes, ids
from app.cli.console import console
from app.cli.options import RepoArg, command_examples
from app.errors import HfvetError
from app.setting_checks import bad_url_lines
from app.settings import Settings, reveal

# A refusal's stable code -> exit code; anything else that is not a success is an error (2).
_REFUSED = {"not-vetted": exit_codes.EXIT_NOT_VETTED, "already-approved": exit_codes.EXIT_FAILED,
            "already-rejected": exit_codes.EXIT_FAILED, "admin-required": exit_codes.EXIT_FAILED,
            "role-too-low": exit_codes.EXIT_FAILED}


@command_examples(
    ("approve a commit whose verdict is review",
     "hfvet review nvidia/DeepSeek-V4-Flash-NVFP4 --revision <sha> --approve --reason \"code read by A. Reviewer\""),
    ("reject a commit through a server (token from HFVET_TOKEN)",
     "hfvet review nvidia/DeepSeek-V4-Flash-NVFP4 --revision <sha> --reject --reason \"unpinned installer\" "
     "--server http://hfvet:8000"),
)
def review_cmd(
    repo: RepoArg,
    revision: Annotated[str, typer.Option("--revision", "-r",
                                          help="The vetted commit: its sha, or the first 7+ hex of it.")],
    reason: Annotated[str, typer.Option("--reason", help="Why (required; kept in the audit log).")],
    approve: Annotated[bool, typer.Option("--approve", help="Approve the commit's current verdict.")] = False,
    reject: Annotated[bool, typer.Option("--reject", help="Reject the commit.")] = False,
    server: Annotated[
        str | None, typer.Option("--server", help="hfvet server URL (default: $HFVET_SERVER, else the local store).")
    ] = None,
) -> None:
    """Approve or reject a vetted commit; the gate answers with the newest review from then on.

    A reviewer may approve a `review` verdict and reject anything; overriding a `reject` needs an admin.

    Through a server the token comes from HFVET_TOKEN; against the local store the actor is cli:<user>, as admin.

    Exit codes: 0 recorded, 1 refused (already approved or rejected, role too low), 4 not vetted, 2 error.
    """
    if approve == reject:
        exit_codes.fail("say --approve or --reject (one of them)")
    repo, revision = ids.repo_id(repo), ids.revision(revision)  # a commit, short or full: the service decides
    decision = "approve" if approve else "reject"
    settings = Settings()
    if server and (lines := bad_url_lines({"--server": server})):  # HFVET_SERVER passed Settings' check
        exit_codes.fail(*lines)
    url = server or settings.server
    if url:
        _via_server(url, reveal(settings.token), {"repo": repo, "revision": revision, "decision": decision,
                                          "reason": reason})
    else:
        _local(settings, repo, revision, decision, reason)


def _via_server(url: str, token: str | None, body: dict[str, str]) -> None:
    from app.cli.client import Client, ServerError  # stdlib HTTP: the CLI's one client of the hfvet API

    try:
        reply = Client(url, token).post("/reviews", body)
    except ServerError as exc:
        exit_codes.fail(str(exc))
    doc = reply.body
    if reply.status == 201:
        _recorded(doc["decision"], body["repo"], str(doc.get("revision") or body["revision"]),
                  f"{doc['reviewer']} ({doc['role']})", doc["approved"])
        return
    error = doc.get("error") or {}
    _refused(str(error.get("code") or f"http-{reply.status}"),
             str(error.get("message") or f"the server answered {reply.status}"))


def _local(settings: Settings, repo: str, revision: str, decision: str, reason: str) -> None:
    from app.cli.keycheck import warn_if_key_exposed
    from app.services.policies import active_policy
    from app.services.reviews import ReviewRefused, ReviewRequest, submit_review
    from app.services.store import open_store

    policy = exit_codes.guard(lambda: active_policy(settings))
    store = exit_codes.guard(lambda: open_store(settings, signing=True))
    warn_if_key_exposed(settings)
    request = ReviewRequest(repo, revision, decision, reason, local_actor(), "admin")
    try:
        result = submit_review(store, policy, request)
    except ReviewRefused as exc:  # before guard's catch-all: a refusal has its own exit code
        _refused(exc.kind, str(exc))
    except HfvetError as exc:
        exit_codes.fail(str(exc))
    finally:
        store.close()
    review = result.review
    _recorded(review.decision, repo, result.sha, f"{review.reviewer} ({review.role})", result.outcome.approved)


def _recorded(decision: str, repo: str, revision: str, by: str, approved: bool) -> None:
    now = "approves" if approved else "refuses"
    typer.echo(f"{decision} of {repo}@{revision} recorded for {by}; the gate {now} it now")


def _refused(code: str, message: str) -> NoReturn:
    if code not in _REFUSED:
        exit_codes.fail(message)
    console(stderr=True).print(
        Text.assemble(("refused: ", "bold red"), f"{message} [{code}]"))
    raise typer.Exit(_REFUSED[code])


def local_actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"
