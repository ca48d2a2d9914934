"""`hfvet download --require-attestation PUB`: the signed attestation is checked before any file is fetched."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn
from urllib.parse import quote

import typer
from rich.text import Text

from app.cli import exit_codes
from app.cli.console import console
from app.core.manifest_json import ManifestDoc

if TYPE_CHECKING:
    from app.core.provenance.verify import Verified
    from app.services.attested import Missing


def require_attested(key: Path, repo: str, sha: str, files: ManifestDoc, server: str | None,
                     token: str | None) -> Verified:
    """The attestation approving exactly ``files`` at ``repo@sha``, signed by ``key``; else exit 1 (nothing fetched)."""
    from app.core.provenance.envelope import AttestationRefused
    from app.services.attested import approved_by_attestation, load_public_key

    public = exit_codes.guard(lambda: load_public_key(key, "--require-attestation"))
    fetch = (lambda kind: _from_server(server, token, repo, sha, kind)) if server else (
        lambda kind: _from_store(repo, sha, kind))
    try:
        found = exit_codes.guard(lambda: approved_by_attestation(fetch, public, repo, sha, files))
    except AttestationRefused as exc:
        _refuse(f"{exc} [{exc.reason}]; nothing was fetched")
    console(stderr=True).print(Text(f"attested: {found.summary()}"))
    return found


def check_landed(found: Verified, landed: Sequence[str]) -> None:
    """The files downloaded are the attested subjects (each was checked against the manifest the subjects equal)."""
    names = {s["name"] for s in found.statement["subject"]}
    if names != set(landed):
        _refuse(f"the downloaded files differ from the attested subjects ({len(landed)} vs {len(names)})")


def _refuse(message: str) -> NoReturn:
    console(stderr=True).print(Text.assemble(("refused: ", "bold red"), "attestation: ", message))
    raise typer.Exit(exit_codes.EXIT_FAILED)


def _from_server(server: str | None, token: str | None, repo: str, sha: str, kind: str) -> str | Missing:
    import json

    from app.cli.client import Client, ServerError
    from app.services.attested import Missing

    client = Client(server or "", token)
    reply = client.get(f"/attestations/{quote(repo)}/{sha}", {"kind": kind})
    error = reply.body.get("error") if reply.status != 200 else None
    error = error if isinstance(error, dict) else {}
    if reply.status == 404:
        return Missing(str(error.get("message") or f"no {kind} attestation of {repo}@{sha}")[:300])
    if reply.status != 200:
        raise ServerError(f"the hfvet server at {client.shown} answered {reply.status} for the {kind} attestation "
                          f"of {repo}@{sha[:12]}: {str(error.get('message') or reply.body)[:200]}")
    return json.dumps(reply.body)


def _from_store(repo: str, sha: str, kind: str) -> str | Missing:
    from app.services.attestations import NoAttestation, newest_envelope
    from app.services.attested import Missing
    from app.services.store import open_store
    from app.settings import Settings

    try:
        return newest_envelope(open_store(Settings()), repo, sha, kind).envelope
    except NoAttestation as exc:
        return Missing(str(exc))
