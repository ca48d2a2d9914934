"""`hfvet download`: gate, fetch exactly the approved files, verify every hash, only then move them in."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from app.cli import exit_codes
from app.cli.gate import exit_for, explain_refusal, local_gate
from app.cli.progress import download_progress, human_bytes
from app.core.gate import Approved
from app.services.downloads import Landed, VerificationError, download_approved
from app.services.gating import GateResult
from app.settings import Settings


def download_cmd(
    repo: Annotated[str, typer.Argument(help="ORG/NAME on the hub.")],
    local_dir: Annotated[
        Path, typer.Option("--local-dir", "-d", help="Where the verified files go (created if missing).")
    ],
    revision: Annotated[
        str | None,
        typer.Option("--revision", "-r", help="Commit sha, branch or tag (default: the newest approved commit)."),
    ] = None,
) -> None:
    """Download an approved revision: exactly its vetted files, each checked against the stored hashes.

    The gate answers first, from the local store under the active policy: a refused gate fetches nothing.

    Files are fetched at the approved commit (HF_ENDPOINT, HF_TOKEN) into a staging folder beside --local-dir.

    Each file's sha256 (LFS) or git blob id must match the manifest; only then are the files moved in.

    On any mismatch, missing or extra file, staging is removed and --local-dir is left as it was.

    Prints the commit on stdout. Exit codes: 0 verified, 6 a file did not match (named on stderr).

    The gate's codes: 1 rejected or waiting for review, 4 not vetted, 5 the branch moved; 2 error.
    """
    result = exit_codes.guard(lambda: local_gate(repo, revision))
    if not isinstance(result.answer, Approved):
        doc = result.to_dict()
        explain_refusal(doc, repo, revision)
        raise typer.Exit(exit_for(doc))
    sha = result.answer.outcome.sha
    landed = exit_codes.guard(lambda: _download(result, sha, local_dir))
    sys.stdout.write(landed.sha + "\n")
    Console(stderr=True, highlight=False, soft_wrap=True).print(Text(
        f"verified {len(landed.files)} files ({human_bytes(landed.total_bytes)}) of {landed.repo}@{landed.sha} "
        f"into {landed.local_dir}"))


def _download(result: GateResult, sha: str, local_dir: Path) -> Landed:
    from app.sources.hub import HubClient  # the hub client only once the gate approved
    from app.sources.hub_download import hub_fetcher

    fetch = hub_fetcher(HubClient.from_settings(Settings()), result.repo, sha)
    total = sum(int(f.get("size") or 0) for f in result.files)
    try:
        with download_progress(total, f"{result.repo}@{sha[:12]}") as on_file:
            return download_approved(result, local_dir, fetch, on_file=on_file)
    except VerificationError as exc:
        err = Console(stderr=True, highlight=False, soft_wrap=True)
        err.print(Text.assemble(("refused: ", "bold red"), str(exc)))
        raise typer.Exit(exit_codes.EXIT_TAMPERED) from exc
