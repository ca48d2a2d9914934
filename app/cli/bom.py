"""`hfvet bom`: the CycloneDX 1.6 ML-BOM of a vetted commit, from the local store or an hfvet server."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from app.cli import exit_codes, ids
from app.cli.options import RepoArg, command_examples
from app.errors import HfvetError
from app.setting_checks import bad_url_lines
from app.settings import Settings, reveal

if TYPE_CHECKING:
    from app.cli.client import Client


@command_examples(
    ("the BOM of the newest vetted commit, on stdout", "hfvet bom nvidia/DeepSeek-V4-Flash-NVFP4"),
    ("of one commit, into a file (e.g. for Dependency-Track)",
     "hfvet bom nvidia/DeepSeek-V4-Flash-NVFP4 --revision <sha> --out model.cdx.json"),
    ("from an hfvet server (token from HFVET_TOKEN)",
     "hfvet bom nvidia/DeepSeek-V4-Flash-NVFP4 --revision <sha> --server http://hfvet:8000"),
)
def bom_cmd(
    repo: RepoArg,
    revision: Annotated[str | None, typer.Option(
        "--revision", "-r", help="The vetted commit: its sha, or the first 7+ hex of it (default: the newest "
                                 "vetted commit).")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the BOM to this file instead of stdout.")
                   ] = None,
    server: Annotated[str | None, typer.Option(
        "--server", help="hfvet server URL (default: $HFVET_SERVER, else the local store).")] = None,
) -> None:
    """Print the CycloneDX 1.6 ML-BOM of a vetted commit: files and hashes, references, policy and verdict.

    It describes the newest stored report of the commit; the same report always gives the same bytes.
    It is not signed: it is an inventory plus hfvet's claims (docs/provenance.md).

    Exit codes: 0 written, 4 the commit (or the repo) was never vetted, 2 error.
    """
    repo, revision = ids.repo_id(repo), ids.revision(revision)
    settings = Settings()
    if server and (lines := bad_url_lines({"--server": server})):
        exit_codes.fail(*lines)
    url = server or settings.server
    document = _via_server(url, reveal(settings.token), repo, revision) if url else _local(settings, repo, revision)
    _write(document, out)


def _local(settings: Settings, repo: str, revision: str | None) -> bytes:
    from app.services.boms import BomNotFound, commit_bom, newest_commit
    from app.services.policies import active_policy
    from app.services.store import open_store

    policy = exit_codes.guard(lambda: active_policy(settings))
    store = exit_codes.guard(lambda: open_store(settings))
    try:
        sha = revision or exit_codes.guard(lambda: newest_commit(store, policy, repo))
        if sha is None:
            _not_vetted(f"{repo} has never been vetted: run `hfvet vet {repo}`")
        try:
            return commit_bom(store, policy, repo, sha).document.encode()
        except BomNotFound as exc:  # before HfvetError: not vetted has its own exit code
            _not_vetted(str(exc))
        except HfvetError as exc:  # a short sha several commits share, a branch name, the store
            exit_codes.fail(str(exc))
    finally:
        store.close()


def _via_server(url: str, token: str | None, repo: str, revision: str | None) -> bytes:
    from app.cli.client import Client, ServerError  # stdlib HTTP: the CLI's one client of the hfvet API

    try:
        client = Client(url, token)
        sha = revision or _newest_on_server(client, repo)
        status, body = client.document(f"/bom/{repo}/{urllib.parse.quote(sha, safe='')}")
    except ServerError as exc:
        exit_codes.fail(str(exc))
    if status == 200:
        return body
    _server_refused(url, status, body)


def _newest_on_server(client: Client, repo: str) -> str:
    """The newest decided commit GET /repos/{org}/{name} lists first."""
    status, body = client.document(f"/repos/{repo}")
    if status != 200:
        _server_refused(client.shown, status, body)
    revisions = _json(body).get("revisions") or []
    if not revisions:
        _not_vetted(f"{repo} has no vetted commit on {client.shown}")
    return str(revisions[0]["revision"])


def _server_refused(url: str, status: int, body: bytes) -> NoReturn:
    error = _json(body).get("error") or {}
    message = str(error.get("message") or f"the hfvet server at {url} answered {status}")
    if status == 404:
        _not_vetted(message)
    exit_codes.fail(f"{message} [{error.get('code') or f'http-{status}'}]")


def _json(body: bytes) -> dict[str, Any]:
    try:
        found = json.loads(body)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _not_vetted(message: str) -> NoReturn:
    typer.echo(f"not vetted: {message}", err=True)
    raise typer.Exit(exit_codes.EXIT_NOT_VETTED)


def _write(document: bytes, out: Path | None) -> None:
    if out is None:
        typer.echo(document.decode(), nl=False)
        return
    try:
        out.write_bytes(document)
    except OSError as exc:
        exit_codes.fail(f"--out {out}: cannot write: {exc.strerror or exc}")
    typer.echo(f"wrote the CycloneDX 1.6 ML-BOM to {out}", err=True)
