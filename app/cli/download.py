"""`hfvet download`: gate, fetch exactly the approved files, verify every hash, only then move them in."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.text import Text

from app.cli import exit_codes, ids
from app.cli.console import console
from app.cli.download_attested import check_landed, require_attested
from app.cli.gate import exit_for, explain_refusal, local_gate
from app.cli.gate_answer import print_warnings
from app.cli.gate_args import OPTIONS, remote
from app.cli.options import RepoArg, command_examples
from app.cli.progress import download_progress, human_bytes
from app.core import manifest_json
from app.core.gate import Approved
from app.core.manifest_json import ManifestDoc
from app.services.downloads import DownloadError, Landed, VerificationError, download, parse_manifest
from app.setting_checks import bad_url_lines
from app.settings import Settings


@command_examples(
    ('the approved files, verified, into ./model', 'hfvet download nvidia/DeepSeek-V4-Flash-NVFP4 --local-dir ./model'),
    ("the gate's answer from a server",
     "hfvet download nvidia/DeepSeek-V4-Flash-NVFP4 --local-dir ./model --server http://hfvet:8000"),
)
def download_cmd(
    repo: RepoArg,
    local_dir: Annotated[
        Path, typer.Option("--local-dir", "-d", help="Where the verified files go (created if missing).")
    ],
    revision: Annotated[
        str | None,
        typer.Option("--revision", "-r", help="Commit sha (full, or the first 7+ hex of a vetted one), branch or tag "
                     "(default: the newest approved commit)."),
    ] = None,
    server: Annotated[
        str | None,
        typer.Option(*OPTIONS["server"],
                     help="Take the gate's answer and manifest from this hfvet server (GET /gate) instead of the "
                          "local store (default: $HFVET_SERVER). The token comes from HFVET_TOKEN."),
    ] = None,
    token: Annotated[str | None, typer.Option(*OPTIONS["token"], hidden=True)] = None,
    require_attestation: Annotated[
        Path | None,
        typer.Option("--require-attestation", metavar="PUB",
                     help="Before fetching any file, verify the commit's signed attestation with this public key "
                          "(PEM): it must approve exactly the gate's commit and files (docs/provenance.md)."),
    ] = None,
) -> None:
    """Download an approved revision: exactly its vetted files, each checked against the approved hashes.

    The gate answers first, under the active policy: from the local store, or from --server / HFVET_SERVER.

    A refused gate fetches nothing; so does a server answer that is not a clear, well-formed approval.

    Files are fetched at the approved commit (HF_ENDPOINT, HF_TOKEN) into a staging folder beside --local-dir.

    Each file's sha256 (LFS) or git blob id must match the manifest; only then are the files moved in.

    On any mismatch, missing or extra file, staging is removed and --local-dir is left as it was.

    Prints the commit on stdout. Exit codes: 0 verified, 6 a file did not match (named on stderr).

    The gate's codes: 1 rejected or waiting for review, 4 not vetted, 5 the branch moved; 2 error.

    With --require-attestation PUB, the attestation (from the server, or the local store) is checked first:
    refused (exit 1, the reason on stderr, nothing fetched) unless signed by PUB and approving that commit
    and exactly those files; after the download, the files landed are the attested subjects.
    """
    repo, revision = ids.repo_id(repo), ids.revision(revision)  # before the store, the hub or a server is asked
    settings = Settings()  # checked before the gate is asked: a bad HF_ENDPOINT stops here, not after it
    where = remote(server, token)  # as `gate` reads them (app/cli/gate_args.py)
    if where.server and (lines := bad_url_lines({"--server": where.server})):  # HFVET_SERVER passed Settings'
        exit_codes.fail(*lines)
    approval = exit_codes.guard(
        lambda: _remote(where.server, where.token, repo, revision) if where.server else _local(repo, revision))
    attested = None
    if require_attestation is not None:
        attested = require_attested(require_attestation, approval.repo, approval.sha, approval.files, where.server,
                                    where.token)
    landed = exit_codes.guard(lambda: _download(settings, approval, local_dir))
    if attested is not None:
        check_landed(attested, landed.files)
    sys.stdout.write(landed.sha + "\n")
    console(stderr=True).print(Text(
        f"verified {len(landed.files)} files ({human_bytes(landed.total_bytes)}) of {landed.repo}@{landed.sha} "
        f"into {landed.local_dir}"))


@dataclass(frozen=True)
class Approval:
    """What the gate approved: the commit and the manifest every fetched byte is checked against."""

    repo: str
    sha: str
    files: ManifestDoc  # app.core.manifest_json's form, parsed by the download


def _local(repo: str, revision: str | None) -> Approval:
    result = local_gate(repo, revision)
    if not isinstance(result.answer, Approved):
        _refuse(result.to_dict(), repo, revision)
    print_warnings(result.to_dict())
    return Approval(result.repo, result.answer.outcome.sha, result.files)


def _remote(server: str, token: str | None, repo: str, revision: str | None) -> Approval:
    """The server's gate answer; an approval must carry a well-formed manifest, or nothing is fetched."""
    from app.cli.client import Client, ServerError

    client = Client(server, token)
    doc = client.gate(repo, revision)  # a 200 for another repo or commit is refused in there
    if exit_for(doc) != exit_codes.EXIT_OK:
        if doc.get("status") == "approved":  # says approved, yet not with approved: true and a commit
            raise ServerError(f"the hfvet server at {client.shown} answered an approval of {repo} that is not "
                              f"well-formed (revision {str(doc.get('revision'))[:80]!r}), so nothing was fetched")
        _refuse(doc, repo, revision)
    print_warnings(doc)
    sha, files = doc["revision"], doc.get("files")
    try:
        if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
            raise DownloadError("its file list is not a list of files")
        parse_manifest(files)
    except DownloadError as exc:
        raise ServerError(f"the hfvet server at {client.shown} approved {repo}@{sha} with a manifest that "
                          f"cannot be verified, so nothing was fetched: {exc}") from exc
    return Approval(repo, sha, files)


def _refuse(doc: dict[str, Any], repo: str, revision: str | None) -> NoReturn:
    explain_refusal(doc, repo, revision)
    raise typer.Exit(exit_for(doc))


def _download(settings: Settings, approval: Approval, local_dir: Path) -> Landed:
    from app.sources.hub import HubClient  # the hub client only once the gate approved
    from app.sources.hub_download import hub_fetcher

    fetch = hub_fetcher(HubClient.from_settings(settings), approval.repo, approval.sha)
    total = manifest_json.declared_bytes(approval.files)
    try:
        with download_progress(total, f"{approval.repo}@{approval.sha[:12]}") as on_file:
            return download(approval.repo, approval.sha, approval.files, local_dir, fetch, on_file=on_file)
    except VerificationError as exc:
        err = console(stderr=True)
        err.print(Text.assemble(("refused: ", "bold red"), str(exc)))
        raise typer.Exit(exit_codes.EXIT_TAMPERED) from exc
